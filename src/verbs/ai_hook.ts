import { hookFrame, lastAssistantText } from "../agents/hook.ts";
import { socketPath } from "../paths.ts";
import { defineVerb } from "./_verb.ts";
import { later, sleep } from "../client/timer.ts";

/** Budget for reading the hook's stdin, and for reaching the host. */
const STDIN_MS = 400;
const HOST_MS = 400;
const MAX_STDIN = 1024 * 1024;

function within<T>(ms: number, p: Promise<T>, fallback: T): Promise<T> {
  let cancel = () => {};
  return Promise.race([
    p.catch(() => fallback),
    new Promise<T>((r) => (cancel = later(ms, () => r(fallback)))),
  ]).finally(() => cancel());
}

async function readStdin(): Promise<string> {
  if (Deno.stdin.isTerminal()) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const buf = new Uint8Array(64 * 1024);
  while (size < MAX_STDIN) {
    const n = await Deno.stdin.read(buf);
    if (n === null) break;
    chunks.push(buf.slice(0, n));
    size += n;
  }
  const all = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.length;
  }
  return new TextDecoder().decode(all);
}

/**
 * Codex's session log for thread `id`: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`
 * (https://github.com/openai/codex/blob/main/codex-rs/core/src/rollout/recorder.rs), newest days first.
 */
async function codexRollout(id: string): Promise<string | undefined> {
  if (!/^[0-9a-f-]{8,64}$/i.test(id)) return undefined;
  const home = Deno.env.get("CODEX_HOME") ?? `${Deno.env.get("HOME") ?? ""}/.codex`;
  const names = async (dir: string) => {
    const out: string[] = [];
    try {
      for await (const e of Deno.readDir(dir)) out.push(e.name);
    } catch { /* not there */ }
    return out.sort().reverse();
  };
  const root = `${home}/sessions`;
  for (const y of await names(root)) {
    for (const m of await names(`${root}/${y}`)) {
      for (const d of await names(`${root}/${y}/${m}`)) {
        const dir = `${root}/${y}/${m}/${d}`;
        const hit = (await names(dir)).find((n) => n.startsWith("rollout-") && n.endsWith(`-${id}.jsonl`));
        if (hit) return `${dir}/${hit}`;
      }
    }
  }
  return undefined;
}

async function lastResultFromTranscript(path: unknown): Promise<string | undefined> {
  if (typeof path !== "string" || !path) return undefined;
  try {
    const file = await Deno.open(path);
    try {
      const size = (await file.stat()).size;
      const tail = Math.min(size, 512 * 1024);
      await file.seek(size - tail, Deno.SeekMode.Start);
      const buf = new Uint8Array(tail);
      let off = 0;
      while (off < tail) {
        const n = await file.read(buf.subarray(off));
        if (n === null) break;
        off += n;
      }
      return lastAssistantText(new TextDecoder().decode(buf.subarray(0, off)));
    } finally {
      file.close();
    }
  } catch {
    return undefined;
  }
}

async function post(method: string, params: unknown): Promise<void> {
  const conn = await Deno.connect({ transport: "unix", path: socketPath() });
  try {
    const line = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) + "\n";
    await conn.write(new TextEncoder().encode(line));
    await conn.read(new Uint8Array(4096));
  } finally {
    conn.close();
  }
}

export default defineVerb({
  name: "ai-hook",
  usage: "paneflow ai-hook <event> [--tool <family>]",
  details: [
    "Events: Claude Code's hook names (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse,",
    "PermissionRequest, Notification, Stop, StopFailure, SessionEnd), Gemini CLI's (BeforeAgent,",
    "AfterAgent, BeforeTool, AfterTool), Codex's notify (codex-notify <json>) or ours (session_start,",
    "prompt_submit, tool_use, notification, stop, exit, session_end). Needs PANEFLOW_SURFACE_ID",
    "and PANEFLOW_PANE_TOKEN (set in every pane; the host refuses a frame without the pane's",
    "token). Always exits 0, quickly, so a stopped host never breaks an agent.",
  ].join("\n"),
  options: {
    tool: { type: "string", value: "<family>", description: "Agent family (default claude)" },
  },
  positionals: [{ name: "event", optional: true }, { name: "payload", optional: true }],
  async run({ opts, args }) {
    try {
      // Codex's notify passes the JSON as an argument; Claude Code on stdin.
      const raw = args[1] ?? await within(STDIN_MS, readStdin(), "");
      let payload: Record<string, unknown> = {};
      try {
        const parsed = JSON.parse(raw);
        if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) payload = parsed;
      } catch { /* garbage on stdin: post what we know */ }
      const event = args[0] ?? (typeof payload.hook_event_name === "string" ? payload.hook_event_name : "");
      const surfaceId = Number(Deno.env.get("PANEFLOW_SURFACE_ID"));
      if (!Number.isInteger(surfaceId) || surfaceId < 1) return 0;
      const token = Deno.env.get("PANEFLOW_PANE_TOKEN");
      const frame = hookFrame(event, payload, { surfaceId, tool: opts.tool, token });
      if (!frame) return 0;
      if (event === "AfterAgent" && frame.params.last_result !== undefined) {
        // Gemini CLI garbles prompt_response when the reply streamed in several chunks
        // ("abcdefgh efgh" for "abcdefgh"); the chat log has the text, a prefix of it.
        const garbled = frame.params.last_result;
        const deadline = Date.now() + STDIN_MS;
        while (true) {
          const logged = await within(STDIN_MS, lastResultFromTranscript(payload.transcript_path), undefined);
          if (logged && garbled.startsWith(logged)) {
            frame.params.last_result = logged;
            break;
          }
          if (Date.now() > deadline) break;
          await sleep(50);
        }
      }
      if (event === "Stop" && frame.params.last_result === undefined) {
        frame.params.last_result = await within(
          STDIN_MS,
          lastResultFromTranscript(payload.transcript_path),
          undefined,
        );
        if (frame.params.last_result === undefined) delete frame.params.last_result;
      }
      if (event === "codex-notify" && frame.params.session_id) {
        const rollout = await within(STDIN_MS, codexRollout(frame.params.session_id), undefined);
        if (rollout) frame.params.transcript_path = rollout;
      }
      await within(HOST_MS, post(frame.method, frame.params), undefined);
    } catch { /* never break the agent */ }
    return 0;
  },
});
