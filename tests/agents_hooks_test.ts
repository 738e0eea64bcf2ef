/**
 * Agents with hooks (docs/agents.md): `paneflow hooks setup|status|uninstall`
 * on Claude Code's settings.json, then the real Claude Code 2.1.328 (hooked by
 * that setup) in a pane of a real host against the mock Messages API, seen
 * only through paneflow's verbs: `status --json`, `watch`, `explain`, `ps`,
 * `send --submit`, `key`.
 */
import assert from "node:assert/strict";
import { ensureClaude } from "./_claude.ts";
import { ROOT, runCli, type TestHost, waitUntil, withHost } from "./_harness.ts";
import { type CliChild, spawnCli } from "./_stream.ts";
import {
  approve,
  dialogShown,
  FLEET_FIELDS,
  lastTurn,
  ok,
  startAgent,
  status,
  STATUS_FIELDS,
  submit,
  waitScreen,
  waitStatus,
} from "./_agents.ts";

const EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PermissionRequest",
  "Notification",
  "Stop",
  "StopFailure",
  "SessionEnd",
];
const USER_HOOK = { type: "command", command: "echo the-users-own-stop-hook >/dev/null" };

Deno.test("hooks setup | status | uninstall | --dry-run on Claude Code's settings.json", async () => {
  const root = await Deno.makeTempDir({ prefix: "pf-hooks-" });
  try {
    // HOME/.claude must stay untouched: CLAUDE_CONFIG_DIR wins.
    const home = `${root}/home`;
    const config = `${root}/config`;
    await Deno.mkdir(`${home}/.claude`, { recursive: true });
    await Deno.mkdir(config);
    const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home, CLAUDE_CONFIG_DIR: config };
    const cli = (...args: string[]) => runCli(["hooks", ...args], env);
    const file = `${config}/settings.json`;
    const original = {
      model: "sonnet",
      permissions: { defaultMode: "default" },
      hooks: { Stop: [{ hooks: [USER_HOOK] }] },
    };
    const originalText = JSON.stringify(original, null, 2);
    await Deno.writeTextFile(file, originalText);
    const read = () => Deno.readTextFile(file);
    const exists = (p: string) => Deno.stat(p).then(() => true, () => false);

    // Nothing installed yet.
    let r = await cli("status", "--json");
    assert.equal(r.code, 0, r.stderr);
    let st = JSON.parse(r.stdout);
    assert.equal(st.file, file);
    assert.equal(st.installed, false);
    assert.deepEqual(st.events.map((e: { event: string }) => e.event), EVENTS);
    assert.ok(st.events.every((e: { command: string | null }) => e.command === null));

    // --dry-run shows the change and writes nothing.
    r = await cli("setup", "--dry-run");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Would write ${file}`));
    assert.match(r.stdout, /ai-hook UserPromptSubmit # paneflow-managed/);
    assert.equal(await read(), originalText);
    assert.equal(await exists(`${file}.bak`), false);

    // setup: every event gets our tagged command; the user's own Stop hook stays.
    r = await cli("setup");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /paneflow hooks installed/);
    const installedText = await read();
    const installed = JSON.parse(installedText);
    assert.equal(installed.model, "sonnet");
    assert.deepEqual(installed.permissions, original.permissions);
    for (const event of EVENTS) {
      const commands = installed.hooks[event].flatMap((g: { hooks: { command: string }[] }) =>
        g.hooks.map((h) => h.command)
      );
      const ours = commands.filter((c: string) => c.endsWith("# paneflow-managed"));
      assert.equal(ours.length, 1, `${event}: ${JSON.stringify(commands)}`);
      assert.match(ours[0], new RegExp(`main\\.ts ai-hook ${event} # paneflow-managed$`));
    }
    assert.deepEqual(
      installed.hooks.Stop[0],
      { hooks: [USER_HOOK] },
      "the user's Stop hook comes first, intact",
    );
    assert.equal(await Deno.readTextFile(`${file}.bak`), originalText, "the backup is the previous file");
    assert.equal(await exists(`${home}/.claude/settings.json`), false, "HOME/.claude is not used");

    r = await cli("status");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /9\/9 paneflow hooks installed/);
    for (const event of EVENTS) assert.match(r.stdout, new RegExp(`✓ ${event}\\n`));
    st = JSON.parse((await cli("status", "--json")).stdout);
    assert.equal(st.installed, true);

    // Idempotent: a second setup changes nothing, not even the backup.
    const bakStat = await Deno.stat(`${file}.bak`);
    const fileStat = await Deno.stat(file);
    r = await cli("setup", "--json");
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { file, changed: false });
    assert.equal(await read(), installedText);
    assert.equal((await Deno.stat(file)).mtime?.getTime(), fileStat.mtime?.getTime());
    assert.equal((await Deno.stat(`${file}.bak`)).mtime?.getTime(), bakStat.mtime?.getTime());
    assert.equal(await Deno.readTextFile(`${file}.bak`), originalText);
    r = await cli("setup");
    assert.match(r.stdout, /already up to date/);

    // uninstall --dry-run writes nothing; uninstall removes only ours.
    r = await cli("uninstall", "--dry-run", "--json");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).changed, true);
    assert.deepEqual(JSON.parse(r.stdout).settings, original);
    assert.equal(await read(), installedText);
    r = await cli("uninstall");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /paneflow hooks removed/);
    assert.deepEqual(JSON.parse(await read()), original, "exactly the user's settings are left");
    assert.equal(await Deno.readTextFile(`${file}.bak`), installedText);
    r = await cli("uninstall", "--json");
    assert.deepEqual(JSON.parse(r.stdout), { file, changed: false });
    st = JSON.parse((await cli("status", "--json")).stdout);
    assert.equal(st.installed, false);

    // An unparseable settings.json is refused and left exactly as it was, without a backup.
    const broken = '{ "hooks": { "Stop": [ }  // half-edited\n';
    await Deno.remove(`${file}.bak`);
    await Deno.writeTextFile(file, broken);
    for (const args of [["setup"], ["uninstall"], ["setup", "--dry-run"]]) {
      r = await cli(...args);
      assert.notEqual(r.code, 0, `hooks ${args.join(" ")} on a broken file`);
      assert.match(r.stderr, /Refusing to edit .*settings\.json: it is not valid JSON/);
      assert.equal(await read(), broken);
      assert.equal(await exists(`${file}.bak`), false);
    }
    // A JSON array is not a settings object either.
    await Deno.writeTextFile(file, "[]");
    r = await cli("setup");
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /not a JSON object/);
    assert.equal(await read(), "[]");

    // Hooks of a shape we do not understand are reported, never misread or dropped.
    for (
      const [hooks, problem] of [
        [{ Stop: [null] }, /"hooks\.Stop\[0\]" is not an object/],
        [{ Stop: "notarray" }, /"hooks\.Stop" is not a list/],
        [[], /"hooks" is not an object/],
      ] as const
    ) {
      const text = JSON.stringify({ hooks });
      await Deno.writeTextFile(file, text);
      for (const action of ["status", "setup", "uninstall"]) {
        r = await cli(action);
        assert.equal(r.code, 1, `${action} on ${text}: ${r.stderr}`);
        assert.match(r.stderr, problem);
        assert.equal(r.stderr.trim().split("\n").length, 1);
        assert.doesNotMatch(r.stderr, /Internal error/);
        assert.equal(await read(), text);
      }
    }

    // No settings.json yet: setup creates it (and there is nothing to back up).
    await Deno.remove(file);
    r = await cli("setup");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(await read()).hooks.Stop.length, 1);
    assert.equal(await exists(`${file}.bak`), false);

    // A symlinked settings.json (dotfiles) stays a link: its target is written.
    await Deno.mkdir(`${root}/dotfiles`);
    await Deno.rename(file, `${root}/dotfiles/settings.json`);
    await Deno.symlink(`${root}/dotfiles/settings.json`, file);
    r = await cli("uninstall");
    assert.equal(r.code, 0, r.stderr);
    assert.ok((await Deno.lstat(file)).isSymlink, "the link was kept");
    assert.equal(JSON.parse(await Deno.readTextFile(`${root}/dotfiles/settings.json`)).hooks, undefined);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("ai-hook always exits 0, quickly: garbage stdin, no host, a host that never answers, open stdin", async () => {
  const root = await Deno.makeTempDir({ prefix: "pf-aihook-" });
  // A socket that accepts connections and never answers.
  const silent = Deno.listen({ transport: "unix", path: `${root}/silent.sock` });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    try {
      for await (const c of silent) held.push(c);
    } catch { /* closed */ }
  })();
  try {
    const base = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: root, PANEFLOW_SURFACE_ID: "1" };
    const cases: [string, Record<string, string>, string | null][] = [
      ["garbage stdin, no host", { PANEFLOW_SOCKET_PATH: `${root}/none.sock` }, "}{ not json \x00"],
      [
        "a valid Stop, no host",
        { PANEFLOW_SOCKET_PATH: `${root}/none.sock` },
        '{"last_assistant_message":"x"}',
      ],
      ["a host that never answers", { PANEFLOW_SOCKET_PATH: `${root}/silent.sock` }, "{}"],
      ["stdin left open", { PANEFLOW_SOCKET_PATH: `${root}/none.sock` }, null],
      [
        "no PANEFLOW_SURFACE_ID",
        { PANEFLOW_SOCKET_PATH: `${root}/none.sock`, PANEFLOW_SURFACE_ID: "" },
        "{}",
      ],
    ];
    const times: Record<string, number> = {};
    await Promise.all(cases.map(async ([label, env, stdin]) => {
      const t0 = performance.now();
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--quiet", `--config=${ROOT}deno.json`, `${ROOT}main.ts`, "ai-hook", "Stop"],
        env: { ...base, ...env },
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const w = child.stdin.getWriter();
      if (stdin !== null) {
        await w.write(new TextEncoder().encode(stdin));
        await w.close();
      }
      const out = await child.output();
      if (stdin === null) await w.close().catch(() => {});
      times[label] = Math.round(performance.now() - t0);
      assert.equal(out.code, 0, `${label}: ${new TextDecoder().decode(out.stderr)}`);
      assert.equal(out.stdout.length, 0, label);
    }));
    // Deno's start-up plus at most 400 ms for stdin and 400 ms for the host. What the agent relies
    // on is that the hook never holds it up for long (Claude Code waits up to 60 s): on a loaded
    // machine five start-ups in parallel take seconds, so the margin is wide.
    for (const [label, ms] of Object.entries(times)) assert.ok(ms < 15_000, `${label}: ${ms} ms`);
    console.log(`ai-hook exit times (ms, 5 in parallel): ${JSON.stringify(times)}`);
  } finally {
    silent.close();
    await accepting;
    for (const c of held) c.close();
    await Deno.remove(root, { recursive: true });
  }
});

/** `paneflow explain --json`. */
interface Explanation {
  status: Record<string, unknown>;
  process: { pid: number; argv: string[]; family: string | null } | null;
  last_hook: { method: string; event: string | null; age_ms: number; params: Record<string, unknown> } | null;
  hook_state: string | null;
  screen: { rule: string; state: string; message: string | null; note: string; rules_version: string } | null;
  why: string;
}

/** `paneflow watch` of one pane, parsed. */
function watchPane(host: TestHost, pane: string): {
  child: CliChild;
  frames: () => Record<string, unknown>[];
  times: () => number[];
} {
  const types = ["agent_state", ...AI].flatMap((t) => ["--type", t]);
  const child = spawnCli(["watch", "--surface", pane, ...types], host.env);
  return {
    child,
    frames: () => child.lines.slice(1).map((l) => JSON.parse(l)),
    times: () => child.times.slice(1),
  };
}
const AI = [
  "ai.session_start",
  "ai.prompt_submit",
  "ai.tool_use",
  "ai.notification",
  "ai.stop",
  "ai.session_end",
  "ai.exit",
];

/** The frames' types and states, e.g. `agent_state:thinking`, `ai.stop:finished`. */
const trail = (frames: Record<string, unknown>[]) => frames.map((f) => `${f.type}:${f.state}`);

Deno.test("hooked Claude Code: a turn, a permission dialog, an interrupt, an API error and exit", async (t) => {
  await ensureClaude();
  const started = Date.now();
  await withHost({}, async (host) => {
    const cc = await startAgent(host, { name: "cc", hooked: true, keepShell: true });
    const w = watchPane(host, "cc");
    try {
      await waitUntil("watch's ack", () => w.child.lines.length >= 1);
      const timings: Record<string, number | string> = { startup_ms: cc.startupMs };

      await t.step("hooks setup wired the agent: SessionStart makes it idle and hooked", async () => {
        const s = await waitStatus(host, "cc", "hooked and idle", (s) => s.hooked && s.state === "idle");
        assert.equal(s.tool, "claude");
        assert.equal(s.reason, "session started");
        assert.equal(s.surface_id, cc.surfaceId);
        assert.equal(s.surface_name, "cc");
        assert.equal(s.workspace, 0);
        assert.ok(typeof s.pid === "number" && s.pid > 0);
        const cmdline = await Deno.readTextFile(`/proc/${s.pid}/cmdline`);
        assert.match(cmdline, /claude/, "pid is the claude process");
      });

      await t.step("a full turn: thinking → finished with last_result, as events and in status", async () => {
        const from = w.frames().length;
        cc.mock.enqueue({ kind: "text", text: "Hello from the mock API." });
        const r = await submit(host, "cc", "hello");
        assert.equal(r.status, "submitted", r.evidence);
        timings.submit_ms = r.elapsed_ms;
        const s = await waitStatus(host, "cc", "finished", (s) => s.state === "finished");
        // Exactly Paneflow's fields (status() checks the key set) with these values.
        assert.deepEqual(Object.keys(s).sort(), [...STATUS_FIELDS].sort());
        assert.equal(s.last_result, "Hello from the mock API.");
        assert.equal(s.hooked, true);
        assert.equal(s.reason, "turn stopped");
        assert.equal(s.message, null);
        assert.equal(s.active_tool_name, null);
        assert.equal(s.waiting_ms, 0);
        assert.ok(s.idle_ms >= 0 && s.output_generation > 0);
        assert.equal(cc.mock.prompts().at(-1)?.prompt, "hello");

        const frames = await waitUntil("ai.stop on watch", () => {
          const f = w.frames().slice(from);
          return f.some((x) => x.type === "ai.stop") && f;
        });
        const seq = trail(frames);
        // The state goes thinking (screen or hook, whichever is first) then finished, once each.
        assert.deepEqual(
          frames.filter((f) => f.type === "agent_state").map((f) => f.state),
          ["thinking", "finished"],
          seq.join(" "),
        );
        assert.ok(seq.indexOf("ai.prompt_submit:thinking") >= 0, seq.join(" "));
        assert.ok(seq.indexOf("ai.prompt_submit:thinking") < seq.indexOf("ai.stop:finished"), seq.join(" "));
        const stop = frames.find((f) => f.type === "ai.stop")!;
        assert.equal(stop.last_result, "Hello from the mock API.");
        assert.equal(stop.surface_id, cc.surfaceId);
        assert.equal(stop.previous_state, "thinking");
        for (const f of frames) assert.equal(f.surface_id, cc.surfaceId);
      });

      await t.step("explain shows the last hook and the screen rule", async () => {
        // The screen rule catches up with the Stop hook once Claude Code redraws its idle input box.
        const e = await waitUntil("explain to show the idle screen", async () => {
          const e = await host.json<Explanation>(["explain", "cc", "--json"]);
          return e.screen?.rule === "idle_prompt" && e;
        });
        assert.equal(e.status.state, "finished");
        assert.equal(e.last_hook?.event, "Stop");
        assert.equal(e.last_hook?.method, "ai.stop");
        assert.equal(e.last_hook?.params.last_result, "Hello from the mock API.");
        assert.equal(e.hook_state, "finished");
        assert.equal(e.screen?.state, "idle");
        assert.equal(e.screen?.rules_version, "2.1.328");
        assert.equal(e.process?.family, "claude");
        assert.match(e.why, /hook Stop/);
        const text = await ok(host, ["explain", "cc"]);
        assert.match(text, /^pane \d+ \(cc\): finished \(claude, hooked\)$/m);
        assert.match(text, /hook: +Stop .* → finished/);
        assert.match(text, /screen: +rule "idle_prompt" → idle/);
      });

      await t.step("ps and ps --json list the hooked agent", async () => {
        const { agents } = await host.json<{ agents: Record<string, unknown>[] }>(["ps", "--json"]);
        assert.equal(agents.length, 1);
        assert.deepEqual(Object.keys(agents[0]).sort(), [...FLEET_FIELDS].sort());
        assert.equal(agents[0].surface_name, "cc");
        assert.equal(agents[0].state, "finished");
        assert.equal(agents[0].hooked, true);
        const table = await ok(host, ["ps"]);
        assert.match(table.split("\n")[0], /^ID +NAME +WS +TOOL +STATE +COST +TOOL_IN_USE +MESSAGE/);
        assert.match(table, new RegExp(`^${cc.surfaceId} +cc +0 +claude +finished\\b`, "m"));
      });

      await t.step(
        "a permission dialog: waiting_for_input with the command; approving continues",
        async () => {
          const from = w.frames().length;
          cc.mock.enqueue({
            kind: "bash",
            command: "touch paneflow-marker.txt",
            description: "Create a marker file",
            then: "Created the marker file.",
          });
          const r = await submit(host, "cc", "create the marker file");
          assert.equal(r.status, "submitted", r.evidence);
          const s1 = await waitStatus(
            host,
            "cc",
            "waiting_for_input",
            (s) => s.state === "waiting_for_input",
          );
          assert.match(s1.message ?? "", /touch paneflow-marker\.txt/);
          assert.equal(s1.active_tool_name, "Bash");
          await waitScreen(host, "cc", "the dialog", dialogShown);
          // waiting_ms is the time in the state: it grows while the dialog waits.
          const s2 = await waitStatus(
            host,
            "cc",
            "waiting_ms to grow",
            (s) => s.waiting_ms >= s1.waiting_ms + 200,
          );
          assert.equal(s2.state, "waiting_for_input");
          assert.match(s2.message ?? "", /touch paneflow-marker\.txt/);

          // send --submit refuses while a dialog is open (Enter would answer it).
          const refused = await host.cli(["send", "cc", "another prompt", "--submit"]);
          assert.notEqual(refused.code, 0);
          assert.match(refused.stderr, /permission dialog/);

          // Approve: option 1 is selected; a typed "1" picks it. `key` refuses Enter.
          const enter = await host.cli(["key", "cc", "enter"]);
          assert.notEqual(enter.code, 0);
          assert.match(enter.stderr, /would submit and is refused/);
          const presses = await approve(host, "cc");
          timings.presses_to_approve = presses;
          const s3 = await waitStatus(host, "cc", "finished after the tool", (s) => s.state === "finished");
          assert.equal(s3.last_result, "Created the marker file.");
          const followup = cc.mock.requests.findLast((q) => q.answered === "followup");
          const toolUse = cc.mock.requests.findLast((q) => q.answered === "bash");
          assert.ok(followup && toolUse, "the mock saw the tool_result");
          assert.equal(followup.toolResults?.[0]?.tool_use_id, toolUse.toolUseId);
          assert.equal(followup.toolResults?.[0]?.is_error, false);
          assert.ok(
            (await Deno.stat(`${cc.setup.projectDir}/paneflow-marker.txt`)).isFile,
            "the command ran",
          );

          // The watch is a separate process: its frames may trail the status just polled.
          const frames = await waitUntil("ai.stop on watch", () => {
            const f = w.frames().slice(from);
            return f.some((x) => x.type === "ai.stop") && f;
          });
          const seq = trail(frames);
          const iWait = seq.findIndex((x) => x.endsWith(":waiting_for_input"));
          const iStop = seq.indexOf("ai.stop:finished");
          assert.ok(iWait > 0 && iStop > iWait, seq.join(" "));
          assert.ok(
            frames.some((f) => f.type === "ai.tool_use" && f.active_tool_name === "Bash"),
            "ai.tool_use names Bash",
          );
          assert.ok(frames.some((f) => f.type === "ai.notification"), seq.join(" "));
        },
      );

      await t.step(
        "an interrupt with key escape leaves thinking within 1 s; no Stop hook fires",
        async () => {
          // Before any output (after a finished turn, so no old `Interrupted` line is on screen), then
          // after some output.
          for (
            const [label, reply] of [
              ["before output", { kind: "hold" }],
              ["after output", { kind: "hold", text: "Partial answer before the interrupt.\n" }],
            ] as const
          ) {
            cc.mock.enqueue(reply);
            const r = await submit(host, "cc", `hold the reply ${label}`);
            assert.equal(r.status, "submitted", r.evidence);
            await waitStatus(host, "cc", "thinking", (s) => s.state === "thinking");
            if (reply.text) {
              await waitScreen(host, "cc", "the partial answer", (s) => s.includes("Partial answer"));
            } else await waitUntil("the request held by the mock", () => cc.mock.holding() === 1);
            const from = w.frames().length;
            // Timed from before the `key` verb starts (its own start-up included) to the
            // agent_state event on `paneflow watch`.
            const t0 = performance.now();
            await ok(host, ["key", "cc", "escape"]);
            const keyed = performance.now();
            const i = await waitUntil(
              "the agent_state event",
              () => {
                const i = w.frames().findIndex((f, i) => i >= from && f.type === "agent_state");
                return i >= 0 ? i + 1 : false;
              },
              { timeoutMs: 3000, intervalMs: 5 },
            ) - 1;
            const left = w.frames()[i];
            const ms = Math.round(w.times()[i] - t0);
            timings[`interrupt_${label.replace(" ", "_")}_ms`] = ms;
            timings[`interrupt_${label.replace(" ", "_")}_key_verb_ms`] = Math.round(keyed - t0);
            assert.equal(left.previous_state, "thinking");
            assert.equal(left.state, "waiting_for_input");
            assert.equal(left.reason, "interrupted");
            assert.ok(ms < 1000, `left thinking ${ms} ms after the key verb started`);
            const s = await status(host, "cc");
            assert.equal(s.state, "waiting_for_input");
            assert.equal(s.reason, "interrupted");
            assert.match(s.message ?? "", /Interrupt/);
            // Claude Code fires no hook for an interrupt.
            assert.deepEqual(w.frames().slice(from).filter((f) => f.type === "ai.stop"), []);
            cc.mock.release();
            if (!reply.text) {
              // Interrupted before any output, Claude Code puts the prompt back into the input box.
              await waitScreen(
                host,
                "cc",
                "the prompt back in the input box",
                (x) => /^❯\u00a0hold the reply/m.test(x),
              );
              await ok(host, ["key", "cc", "ctrl-u"]);
              await waitScreen(host, "cc", "an empty input box", (x) => /^❯\u00a0$/m.test(x));
            }
          }
          // The next prompt is a normal turn again.
          cc.mock.enqueue({ kind: "text", text: "Back to work." });
          assert.equal((await submit(host, "cc", "carry on")).status, "submitted");
          const s = await waitStatus(host, "cc", "finished", (s) => s.state === "finished");
          assert.equal(s.last_result, "Back to work.");
          assert.equal(s.reason, "turn stopped");
        },
      );

      await t.step("an API error gives errored", async () => {
        cc.mock.enqueue({ kind: "error", status: 500 });
        const r = await submit(host, "cc", "this request fails");
        assert.equal(r.status, "submitted", r.evidence);
        const s = await waitStatus(host, "cc", "errored", (s) => s.state === "errored");
        assert.match(s.reason, /server_error/);
        assert.match(s.message ?? "", /API Error: 500/);
        // StopFailure can come before Claude Code redraws (on a loaded machine the spinner was still up).
        await waitScreen(host, "cc", "the API error", (x) => /API Error: 500/.test(lastTurn(x)));
        const e = await host.json<Explanation>(["explain", "cc", "--json"]);
        assert.equal(e.last_hook?.event, "StopFailure");
      });

      await t.step("/exit gives ai.exit and the pane is idle again", async () => {
        const from = w.frames().length;
        const r = await submit(host, "cc", "/exit");
        assert.equal(r.status, "submitted", r.evidence);
        timings.exit_submit_ms = r.elapsed_ms;
        const exit = await waitUntil(
          "ai.exit on watch",
          () => w.frames().slice(from).find((f) => f.type === "ai.exit"),
          { timeoutMs: 15_000 },
        );
        assert.equal(exit.surface_id, cc.surfaceId);
        assert.equal(exit.tool, "claude");
        assert.equal(exit.state, "idle");
        const s = await status(host, "cc");
        assert.equal(s.state, "idle");
        assert.equal(s.tool, null);
        assert.equal(s.pid, null);
        assert.equal(s.hooked, false);
        assert.equal(s.reason, "no_agent", "the shell is back in the pane");
        const seq = trail(w.frames().slice(from));
        assert.ok(seq.indexOf("ai.session_end:idle") < seq.indexOf("ai.exit:idle"), seq.join(" "));
        assert.deepEqual(await host.json(["ps", "--json"]), { agents: [] });
      });
      console.log(`timings: ${JSON.stringify(timings)}`);
    } finally {
      w.child.kill();
      await w.child.status;
      await cc.dispose();
    }
  });
  const total = Date.now() - started;
  assert.ok(total < 60_000, `took ${total} ms`);
});
