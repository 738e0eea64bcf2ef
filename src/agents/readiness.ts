/**
 * The one answer to "is this pane ready for input, or idle": every caller
 * that decides it asks here instead of keeping its own rule.
 *
 * - {@link readiness}: a shell at its prompt with no foreground job, or an
 *   agent that is idle, finished or waiting for input (no permission dialog
 *   open). `surface.is_ready`, `ask` and queue delivery (via PaneIO's host).
 * - {@link paneIdle}: `wait --idle` (an agent no longer working; another
 *   program quiet for the settle time).
 * - {@link readyForPrompt}: a flow step's prompt (an agent idle, finished or
 *   waiting for input; another program quiet for a while).
 * - {@link prefillSettled} and {@link readingTty}: the prompt prefill of
 *   `up`, `workspace.create` and `surface.split`.
 * - {@link agentWorking}, {@link turnEnded} and {@link dialogShown}: the
 *   agent submit transaction and queue delivery.
 *
 * Light on purpose (no npm package, no zod, no host state): the CLI's `wait`
 * and the flow runner load it as well as the host. The states themselves come
 * from the tracker (`tracker.ts`); this module only reads them.
 *
 * @module
 */
import { foreground, foregroundGroup } from "../core/pane/proc.ts";
import { type PromptRule, promptState } from "../spec/prompts.ts";

/** Why a pane is or is not ready. */
export type ReadyReason =
  | "shell_prompt"
  | "agent_idle"
  | "agent_finished"
  | "agent_waiting_for_input"
  | "agent_busy"
  | "dialog_open"
  | "foreground_job"
  | "continuation_prompt"
  | "no_prompt"
  | "exited";

/** A readiness verdict. */
export interface Readiness {
  ready: boolean;
  reason: ReadyReason;
  /** One human line: what was seen. */
  detail: string;
}

/** What readiness needs to know about a pane (a narrow view of the host). */
export interface ReadyProbe {
  pid: number;
  exited: boolean;
  /** The tracked agent's family and state, or null for a pane without one. */
  agent: { tool: string; state: string; dialog: boolean } | null;
  /** The text of the cursor's row (the last row with content). */
  cursorLine: string;
}

const SHELLS = new Set([
  "sh",
  "bash",
  "zsh",
  "fish",
  "dash",
  "ksh",
  "mksh",
  "ash",
  "busybox",
  "yash",
  "tcsh",
  "csh",
]);
const READY_STATES: Record<string, ReadyReason> = {
  idle: "agent_idle",
  finished: "agent_finished",
  waiting_for_input: "agent_waiting_for_input",
};

const base = (argv0: string) => argv0.replace(/^-/, "").split("/").pop() ?? argv0;

/** The verdict for a pane. Pure except for /proc reads of the pane's foreground. */
export function readiness(p: ReadyProbe, rules: readonly PromptRule[]): Readiness {
  if (p.exited) return { ready: false, reason: "exited", detail: "the pane's program has exited" };
  if (p.agent) {
    if (p.agent.dialog) {
      return { ready: false, reason: "dialog_open", detail: `${p.agent.tool} shows a permission dialog` };
    }
    const r = READY_STATES[p.agent.state];
    return r
      ? { ready: true, reason: r, detail: `${p.agent.tool} is ${p.agent.state}` }
      : { ready: false, reason: "agent_busy", detail: `${p.agent.tool} is ${p.agent.state}` };
  }
  // The foreground process group's leader: an interactive shell when nothing runs in front of it
  // (a job the shell starts gets a group of its own), whether it is the pane's program or a child.
  const fg = foreground(p.pid);
  const argv = fg?.argv ?? [];
  const argv0 = argv[0] ?? "";
  const interactiveShell = SHELLS.has(base(argv0)) &&
    !argv.slice(1).some((a) => a === "-c" || /^-[a-z]*c[a-z]*$/.test(a));
  if (!interactiveShell) {
    const custom = promptState(p.cursorLine, rules.filter((r) => r.shell === "custom"));
    if (custom === "prompt") {
      return { ready: true, reason: "shell_prompt", detail: "a configured prompt shows" };
    }
    const tpgid = foregroundGroup(p.pid);
    const running = fg ? argv.join(" ").slice(0, 120) : `process group ${tpgid}`;
    return { ready: false, reason: "foreground_job", detail: `running ${running}` };
  }
  const state = promptState(p.cursorLine, rules);
  if (state === "prompt") {
    return { ready: true, reason: "shell_prompt", detail: `${base(argv0)} at its prompt` };
  }
  if (state === "continuation") {
    return {
      ready: false,
      reason: "continuation_prompt",
      detail: `${base(argv0)} waits for the rest of a command`,
    };
  }
  return {
    ready: false,
    reason: "no_prompt",
    detail: `${base(argv0)} has no foreground job but its cursor line is not a prompt: ${
      JSON.stringify(p.cursorLine.slice(0, 80))
    }`,
  };
}

/** Agent states that mean a turn is under way. */
const WORKING_STATES: ReadonlySet<string> = new Set(["thinking", "stalled"]);
/** Agent states that say nothing about work: output quiescence decides. */
const UNKNOWN_STATES: ReadonlySet<string> = new Set(["unknown_running"]);

/** Whether an agent in `state` is in a turn (thinking, or stalled in one). */
export function agentWorking(state: string | null | undefined): boolean {
  return WORKING_STATES.has(state ?? "");
}

/** Whether an agent in `state` takes a prompt now (idle, finished or waiting for input). */
export function agentReady(state: string): boolean {
  return state in READY_STATES;
}

/** Whether an agent's turn has ended with it back at its input box (queue delivery's "done"). */
export function turnEnded(state: string): boolean {
  return state === "finished" || state === "idle";
}

/**
 * Whether the screen rule `rule` is a dialog that holds the agent's input.
 * The permission dialog always counts; the trust dialog (`trust`) too before
 * a submit, where a key would answer the dialog instead of reaching the box.
 */
export function dialogShown(rule: string | null | undefined, opts: { trust?: boolean } = {}): boolean {
  return rule === "permission_dialog" || (opts.trust === true && rule === "trust_dialog");
}

/** What `surface.status` says of a pane, as far as readiness reads it. */
export interface PaneStatus {
  tool: string | null;
  state: string;
  idle_ms: number;
}

/**
 * `wait --idle`'s verdict: a pane with a tracked agent (in a known state) is
 * idle once the agent no longer works; any other pane once its output has
 * been quiet for `settleMs`. `agent` says which rule applied.
 */
export function paneIdle(st: PaneStatus, settleMs: number): { agent: boolean; idle: boolean } {
  const agent = st.tool !== null && !UNKNOWN_STATES.has(st.state);
  return { agent, idle: agent ? !agentWorking(st.state) : st.idle_ms >= settleMs };
}

/**
 * Whether a flow step may type its prompt into a pane: an agent pane once it
 * takes a prompt ({@link agentReady}), another once quiet for `quietMs`.
 */
export function readyForPrompt(st: PaneStatus, quietMs: number): boolean {
  return st.tool ? agentReady(st.state) : st.idle_ms >= quietMs;
}

/** Quiet time after a new pane's first output before its prefill is typed. */
export const PREFILL_SETTLE_MS = 500;
/** A program that prints nothing counts as ready for its prefill after this long. */
export const PREFILL_SILENT_MS = 3000;

/**
 * Whether a new pane's program is ready for its prefilled prompt: its first
 * output has settled, or it printed nothing for a while or reads its
 * terminal (`reading` is called only then: it reads /proc).
 */
export function prefillSettled(p: {
  now: number;
  launched: number;
  /** Whether the program printed since it was launched. */
  printed: boolean;
  lastOutputAt: number;
  reading: () => boolean;
}): boolean {
  if (p.printed) return p.now - p.lastOutputAt >= PREFILL_SETTLE_MS;
  return p.now - p.launched >= PREFILL_SILENT_MS || p.reading();
}

/** The numbers of read(2) and readv(2) by architecture (they differ: x86_64's read is 0, arm64's 63). */
const READ_SYSCALLS: Record<string, readonly number[]> = {
  x86_64: [0, 19],
  aarch64: [63, 65],
};

/**
 * Whether a /proc/<pid>/syscall line says the process is blocked in read on
 * fd 0 on `arch` (`Deno.build.arch`). An unknown architecture: never (the
 * prefill then waits for quiet output instead).
 */
export function blockedReadingFd0(line: string, arch: string = Deno.build.arch): boolean {
  const numbers = READ_SYSCALLS[arch];
  if (!numbers) return false;
  const [nr, fd] = line.trim().split(" ");
  return numbers.includes(Number(nr)) && fd === "0x0";
}

/** Whether the pane's foreground process is blocked reading its terminal (fd 0). */
export function readingTty(pid: number): boolean {
  const fg = foreground(pid)?.pid ?? pid;
  try {
    return blockedReadingFd0(Deno.readTextFileSync(`/proc/${fg}/syscall`));
  } catch {
    return false;
  }
}
