/**
 * Parser fuzz (docs/hardening.md): seeded mutations of the valid fixtures fed to the
 * parsers directly — `up` specs, flows, the config and hook stdin. Every
 * input either loads or gets located error lines (file:line:col for the
 * TOML formats, file:line:col or the key for the config); never a stack
 * trace, never an uncaught exception. The seed is printed on failure;
 * PANEFLOW_FUZZ_SEED=<n> replays it (PANEFLOW_FUZZ_CASES scales the count).
 */
import assert from "node:assert/strict";
import { DEFAULT_LAUNCHERS } from "../src/agents/launchers.ts";
import { describeToolCall, hookFrame, lastAssistantText, methodFor } from "../src/agents/hook.ts";
import { FlowSpecError, parseFlowToml } from "../src/flow/check.ts";
import { parseConfig } from "../src/spec/config.ts";
import { methods } from "../src/spec/protocol.ts";
import { parseWorkspaceToml, WorkspaceSpecError } from "../src/up/check.ts";
import { ROOT } from "./_harness.ts";
import { rng } from "./_prng.ts";

const SEED = Number(Deno.env.get("PANEFLOW_FUZZ_SEED") ?? (Date.now() % 2 ** 31));
const SCALE = Number(Deno.env.get("PANEFLOW_FUZZ_CASES") ?? 1);
const agents = Object.keys(DEFAULT_LAUNCHERS);

/** Pieces that break formats in interesting ways. */
const TOKENS = [
  "[",
  "]",
  "[[panes]]",
  "[[steps]]",
  "[panes]",
  "{",
  "}",
  '"',
  "'",
  "'''",
  '"""',
  "=",
  " = ",
  ",",
  ".",
  "\n",
  "\r\n",
  "\t",
  "\0",
  "\\",
  "\\u0000",
  "#",
  "//",
  "/*",
  "-1",
  "1e999",
  "9007199254740993",
  "nan",
  "inf",
  "true",
  "null",
  "[[[[[[[[[[[[[[[[",
  "{a={b={c={d={e={f={}}}}}}}",
  "é",
  "\u{1F600}",
  "\u202E",
  "\uFEFF",
  "constructor",
  "__proto__",
  "${port}",
  "${",
  "}}",
  "{{",
  "../../../../etc",
  "~",
  "$HOME",
  "x".repeat(5000),
  "1979-05-27T07:32:00Z",
];

/** One seeded mutation of `text`. */
function mutate(text: string, r: () => number): string {
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)];
  const at = () => Math.floor(r() * (text.length + 1));
  const lines = text.split("\n");
  const steps = 1 + Math.floor(r() * 4);
  for (let s = 0; s < steps; s++) {
    switch (Math.floor(r() * 9)) {
      case 0: { // insert a token
        const i = at();
        text = text.slice(0, i) + pick(TOKENS) + text.slice(i);
        break;
      }
      case 1: { // delete a span
        const i = at();
        text = text.slice(0, i) + text.slice(i + Math.floor(r() * 40));
        break;
      }
      case 2: { // flip a character
        const i = Math.floor(r() * text.length);
        text = text.slice(0, i) + String.fromCharCode(Math.floor(r() * 0x250)) + text.slice(i + 1);
        break;
      }
      case 3: // duplicate a line
      case 4: { // swap two lines
        const ls = text.split("\n");
        const i = Math.floor(r() * ls.length), j = Math.floor(r() * ls.length);
        if (s % 2) ls.splice(i, 0, ls[j]);
        else [ls[i], ls[j]] = [ls[j], ls[i]];
        text = ls.join("\n");
        break;
      }
      case 5: // truncate
        text = text.slice(0, at());
        break;
      case 6: { // replace a value after `=` or `:` with something of another type
        const ls = text.split("\n");
        const i = Math.floor(r() * ls.length);
        ls[i] = ls[i].replace(
          /([=:]\s*).*$/,
          `$1${pick(['""', "0", "-5", "[]", "{}", "true", '"x"', "[1, [2]]", "3.5"])}`,
        );
        text = ls.join("\n");
        break;
      }
      case 7: // a line from the original, anywhere
        text += "\n" + pick(lines);
        break;
      default: { // deep nesting
        const n = Math.floor(r() * 3000);
        text = text.slice(0, at()) + "[".repeat(n) + "]".repeat(Math.floor(r() * n));
      }
    }
  }
  return text;
}

async function samples(dir: string, ext: string): Promise<{ name: string; text: string }[]> {
  const out = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile && e.name.endsWith(ext)) {
      out.push({ name: e.name, text: await Deno.readTextFile(`${dir}/${e.name}`) });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

const STACK = /\n\s+at \S+|\bat (file|ext):\/\//;

/** Runs `cases` mutations through `check`; any failure names the seed, the case and its input. */
async function fuzz(
  what: string,
  corpus: { name: string; text: string }[],
  cases: number,
  check: (text: string, sample: string) => Promise<void> | void,
): Promise<number> {
  const r = rng(SEED ^ [...what].reduce((h, c) => Math.imul(h, 31) + c.charCodeAt(0) | 0, 7));
  let loaded = 0;
  for (let i = 0; i < cases; i++) {
    const sample = corpus[Math.floor(r() * corpus.length)];
    const text = mutate(sample.text, r);
    try {
      await check(text, sample.name);
      loaded++;
    } catch (e) {
      if (e instanceof Rejected) continue;
      const msg = e instanceof Error ? e.stack ?? e.message : String(e);
      throw new Error(
        `${what} fuzz failed at case ${i} (mutation of ${sample.name}); replay with PANEFLOW_FUZZ_SEED=${SEED}\n` +
          `input: ${JSON.stringify(text.slice(0, 2000))}\n${msg}`,
      );
    }
  }
  return loaded;
}

/** A rejection that was as it should be (located, no stack). */
class Rejected extends Error {}

/** Every line of a TOML parser's error is `file:line:col: ...`; no stack. */
function locatedLines(err: unknown, cls: new (...a: never[]) => Error, file: string): never {
  if (!(err instanceof cls)) throw err;
  const lines = err.message.split("\n");
  assert.ok(err.message.length > 0, "an empty error");
  assert.ok(!STACK.test(err.message), `a stack trace in: ${err.message}`);
  for (const l of lines) {
    assert.ok(
      l.startsWith(`${file}:`) && /^[^:]+:\d+:\d+: \S/.test(l),
      `an unlocated line: ${JSON.stringify(l)}`,
    );
  }
  throw new Rejected();
}

Deno.test(`parser fuzz: up specs, flows, config, hook stdin (seed ${SEED})`, async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "pf-pfuzz-" });
  const env = { get: (k: string) => ({ HOME: dir, FIXTURE_DIR: dir } as Record<string, string>)[k] };
  try {
    await t.step("up specs", async () => {
      const base = Deno.realPathSync(`${ROOT}tests/fixtures/workspace/valid`);
      const corpus = await samples(base, ".toml");
      const n = await fuzz("workspace", corpus, 1500 * SCALE, async (text) => {
        await parseWorkspaceToml(text, { path: `${base}/ws.toml`, display: "ws.toml", env, agents })
          .catch((e) => locatedLines(e, WorkspaceSpecError, "ws.toml"));
      });
      console.log(
        `  up specs: ${n} of ${1500 * SCALE} mutations loaded, the rest rejected with located lines`,
      );
    });

    await t.step("flows", async () => {
      const base = Deno.realPathSync(`${ROOT}tests/fixtures/flow/valid`);
      const corpus = await samples(base, ".toml");
      const n = await fuzz("flow", corpus, 1500 * SCALE, async (text) => {
        await parseFlowToml(text, { path: `${base}/f.toml`, display: "f.toml", env, agents })
          .catch((e) => locatedLines(e, FlowSpecError, "f.toml"));
      });
      console.log(`  flows: ${n} of ${1500 * SCALE} loaded`);
    });

    await t.step("config", async () => {
      const corpus = [
        {
          name: "full.jsonc",
          text: `{
  // every section
  "ai_injection_fence": true,
  "ai_unrestricted": false,
  "agent_stall_threshold_secs": 120,
  "host": { "pane_workers": 2, "idle_timeout_secs": 30, "heartbeat_secs": 30 },
  "terminal": { "rows": 40, "cols": 120, "scrollback_lines": 10000, "kill_grace_ms": 2000,
    "env": { "LANG": "C.UTF-8" } },
  "agents": { "aider": { "command": "aider --no-git" } },
  "hosts": { "box": { "ssh": "me@box" } },
}`,
        },
        { name: "empty.jsonc", text: "// nothing\n" },
        { name: "min.jsonc", text: '{"host": {"pane_workers": 1}}' },
      ];
      const n = await fuzz("config", corpus, 3000 * SCALE, (text) => {
        try {
          parseConfig(text, "cfg.jsonc");
        } catch (e) {
          if (!(e instanceof Error)) throw e;
          assert.ok(!STACK.test(e.message), `a stack trace in: ${e.message}`);
          assert.equal(e.message.split("\n").length, 1, `one line: ${e.message}`);
          assert.match(
            e.message,
            /^(Invalid config cfg\.jsonc:\d+:\d+: |Invalid config cfg\.jsonc: |Unknown config key "(?:[^"\\\n]|\\.)*" in cfg\.jsonc$|Invalid config key "(?:[^"\\\n]|\\.)+" in cfg\.jsonc: )/,
          );
          throw new Rejected();
        }
      });
      console.log(`  config: ${n} of ${3000 * SCALE} loaded`);
    });

    await t.step("hook stdin", async () => {
      const corpus = [
        {
          name: "pre_tool_use",
          text: JSON.stringify({
            hook_event_name: "PreToolUse",
            session_id: "abc",
            transcript_path: "/tmp/t.jsonl",
            tool_name: "Bash",
            tool_input: { command: "ls -la", description: "list" },
          }),
        },
        {
          name: "prompt",
          text: JSON.stringify({ hook_event_name: "UserPromptSubmit", prompt: "fix the bug" }),
        },
        {
          name: "notification",
          text: JSON.stringify({ hook_event_name: "Notification", message: "Claude needs your permission" }),
        },
        { name: "stop", text: JSON.stringify({ hook_event_name: "Stop", stop_hook_active: false }) },
        {
          name: "codex",
          text: JSON.stringify({ type: "agent-turn-complete", "last-assistant-message": "done" }),
        },
        {
          name: "transcript",
          text: [
            JSON.stringify({ type: "user", message: { role: "user", content: "hi" } }),
            JSON.stringify({
              type: "assistant",
              message: { role: "assistant", content: [{ type: "text", text: "hello" }] },
            }),
          ].join("\n"),
        },
      ];
      const events = [
        "PreToolUse",
        "PostToolUse",
        "UserPromptSubmit",
        "Notification",
        "Stop",
        "SessionStart",
        "SessionEnd",
        "codex-notify",
        "constructor",
        "__proto__",
        "toString",
      ];
      const r = rng(SEED);
      const n = await fuzz("hook stdin", corpus, 4000 * SCALE, (text) => {
        // As `paneflow ai-hook` reads it: JSON, or garbage posted as {}.
        let payload: Record<string, unknown> = {};
        try {
          const parsed = JSON.parse(text);
          if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) payload = parsed;
        } catch { /* garbage */ }
        const event = events[Math.floor(r() * events.length)];
        const tool = ["claude", "codex", "gemini", "constructor"][Math.floor(r() * 4)];
        const frame = hookFrame(event, payload, { surfaceId: 1, tool, pid: 42, token: "0".repeat(32) });
        if (frame) {
          assert.equal(methodFor(event), frame.method);
          // The host validates it; an invalid frame is -32602, never a throw.
          methods[frame.method].safeParse(frame.params);
        }
        describeToolCall(payload.tool_name, payload.tool_input);
        lastAssistantText(text);
      });
      console.log(`  hook stdin: ${n} of ${4000 * SCALE} handled`);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
