/**
 * Helpers for the agent tests (tests/agents_*_test.ts): the real Claude Code
 * in a pane, with or without paneflow's hooks installed by `paneflow hooks
 * setup`, its own mock API, and polling of `paneflow status --json`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ensureClaude, isIdleComposer, prepareClaudeEnv, shQuote } from "./_claude.ts";
import type { ClaudeEnv, ClaudeEnvOptions } from "./_claude.ts";
import { type TestHost, waitUntil } from "./_harness.ts";
import { type MockAnthropic, startMockAnthropic } from "./_mock_anthropic.ts";

/** Paneflow's status fields, in its order (docs/agents.md; https://github.com/ArthurDEV44/paneflow/blob/main/docs/user/scripting.md), then the dialog on screen. */
export const STATUS_FIELDS = [
  "pid",
  "tool",
  "state",
  "hooked",
  "reason",
  "surface_id",
  "surface_name",
  "workspace",
  "active_tool_name",
  "message",
  "last_result",
  "waiting_ms",
  "idle_ms",
  "output_generation",
  "dialog_id",
] as const;

/** A `ps --json` agent's fields: its status and what it spent (docs/usage.md). */
export const FLEET_FIELDS = [...STATUS_FIELDS, "cost_usd", "total_tokens", "caps"] as const;

/** One `paneflow status --json` object. */
export interface AgentStatus {
  pid: number | null;
  tool: string | null;
  state: string;
  hooked: boolean;
  reason: string;
  surface_id: number;
  surface_name: string | null;
  workspace: number;
  active_tool_name: string | null;
  message: string | null;
  last_result: string | null;
  waiting_ms: number;
  idle_ms: number;
  output_generation: number;
  dialog_id: string | null;
}

/** A Claude Code in a pane with its own mock API. */
export interface Agent {
  pane: string;
  surfaceId: number;
  mock: MockAnthropic;
  setup: ClaudeEnv;
  /** Milliseconds from `paneflow new` to the empty composer. */
  startupMs: number;
  /** Stops the mock and removes the dirs (the pane goes with the host). */
  dispose(): Promise<void>;
}

/** Options for {@link startAgent}. */
export interface AgentOptions extends Partial<Omit<ClaudeEnvOptions, "baseUrl" | "hooks">> {
  name: string;
  /** Run `paneflow hooks setup` against the agent's CLAUDE_CONFIG_DIR before it starts. */
  hooked: boolean;
  /** Run claude from a shell that stays in the pane after claude exits (default: claude is the pane's program). */
  keepShell?: boolean;
}

/** Runs a CLI verb that must succeed; returns its stdout. */
export async function ok(host: TestHost, args: string[], env?: Record<string, string>): Promise<string> {
  const r = await host.cli(args, { env });
  if (r.code !== 0) throw new Error(`paneflow ${args.join(" ")} exited ${r.code}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** `paneflow read <pane> --raw`. */
export function screen(host: TestHost, pane: string): Promise<string> {
  return ok(host, ["read", pane, "--raw"]);
}

/**
 * Starts a mock API and the real Claude Code in a new pane; with `hooked`,
 * `paneflow hooks setup` writes our hooks into its isolated settings.json
 * first. Waits for the empty composer.
 */
export async function startAgent(host: TestHost, opts: AgentOptions): Promise<Agent> {
  const bin = await ensureClaude();
  const mock = await startMockAnthropic();
  const setup = await prepareClaudeEnv({ ...opts, baseUrl: mock.url });
  try {
    if (opts.hooked) {
      await ok(host, ["hooks", "setup", "--agent", "claude"], { CLAUDE_CONFIG_DIR: setup.configDir });
    }
    const t0 = Date.now();
    const created = await host.json<{ surface_id: number }>([
      "new",
      "-c",
      opts.keepShell ? `${shQuote(bin)}; exec /bin/sh` : shQuote(bin),
      "--pane-name",
      opts.name,
      "--cwd",
      setup.projectDir,
      ...setup.envArgs,
    ]);
    await waitScreen(host, opts.name, "claude's empty composer", isIdleComposer, 30_000);
    return {
      pane: opts.name,
      surfaceId: created.surface_id,
      mock,
      setup,
      startupMs: Date.now() - t0,
      async dispose() {
        await mock.close();
        await setup.cleanup();
      },
    };
  } catch (e) {
    await mock.close();
    await setup.cleanup();
    throw e;
  }
}

/** Waits until `pred` holds on the pane's screen; the error shows the last screen. */
export async function waitScreen(
  host: TestHost,
  pane: string,
  what: string,
  pred: (s: string) => boolean,
  timeoutMs = 10_000,
): Promise<string> {
  let last = "";
  try {
    return await waitUntil(what, async () => {
      last = await screen(host, pane);
      return pred(last) && last;
    }, { timeoutMs, intervalMs: 25 });
  } catch (e) {
    throw new Error(`${(e as Error).message}\n--- last screen of ${pane} ---\n${last}`);
  }
}

/** `paneflow status <pane> --json`, checked to carry exactly Paneflow's fields. */
export async function status(host: TestHost, pane: string): Promise<AgentStatus> {
  const s = await host.json<AgentStatus>(["status", pane, "--json"]);
  assert.deepEqual(Object.keys(s).sort(), [...STATUS_FIELDS].sort(), "status --json fields");
  return s;
}

/** Polls `status --json` until `pred` holds; the error shows the last status, `explain` and the screen. */
export async function waitStatus(
  host: TestHost,
  pane: string,
  what: string,
  pred: (s: AgentStatus) => boolean,
  timeoutMs = 10_000,
): Promise<AgentStatus> {
  try {
    return await waitUntil(`${pane}: ${what}`, async () => {
      const s = await status(host, pane);
      if (pred(s)) return s;
      throw new Error(JSON.stringify(s));
    }, { timeoutMs, intervalMs: 25 });
  } catch (e) {
    const explain = await host.cli(["explain", pane, "--json"]);
    const text = await host.cli(["read", pane, "--raw"]);
    throw new Error(
      `${
        (e as Error).message
      }\n--- explain ${pane} ---\n${explain.stdout}--- screen of ${pane} ---\n${text.stdout}`,
    );
  }
}

/** The `send --submit --json` result of a pane with an agent. */
export interface SubmitResult {
  surface_id: number;
  status: "submitted" | "queued" | "stalled" | "unknown";
  evidence: string;
  attempts: number;
  elapsed_ms: number;
  submitted: boolean;
}

/** `paneflow send <pane> <text> --submit --json`. */
export async function submit(host: TestHost, pane: string, text: string): Promise<SubmitResult> {
  const r = await host.cli(["send", pane, text, "--submit", "--json"]);
  if (r.code !== 0 && !r.stdout) throw new Error(`send --submit exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** The last turn of a Claude Code screen (from the last `❯ ` transcript prompt down). */
export function lastTurn(screenText: string): string {
  const lines = screenText.split("\n");
  const i = lines.findLastIndex((l) => /^❯ /.test(l));
  return lines.slice(Math.max(0, i)).join("\n");
}

/** Claude Code's permission dialog is on screen. */
export function dialogShown(s: string): boolean {
  return /Do you want to proceed\?/.test(s) && /Esc to cancel/.test(s);
}

/**
 * Answers a permission dialog with a typed "1" (option 1, "Yes", is selected;
 * `key` refuses Enter). Claude Code drops keys that arrive within ~0.15 s of
 * the dialog appearing, so the first press waits until paneflow has seen the
 * dialog for 250 ms (its waiting_ms), and a press that left the dialog up is
 * repeated. Returns the number of presses.
 */
export async function approve(host: TestHost, pane: string): Promise<number> {
  await waitScreen(host, pane, "the dialog", dialogShown);
  await waitStatus(
    host,
    pane,
    "the dialog to settle",
    (s) => s.state === "waiting_for_input" && s.waiting_ms >= 250,
  );
  for (let press = 1; press <= 4; press++) {
    await ok(host, ["send", pane, "1"]);
    try {
      await waitScreen(host, pane, "the dialog to close", (s) => !dialogShown(s), 1500);
      return press;
    } catch { /* dropped: press again */ }
  }
  throw new Error("the dialog did not close after 4 presses of 1");
}
