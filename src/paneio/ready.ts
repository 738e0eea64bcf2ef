/**
 * Whether a pane is ready for input: a shell at its prompt with no
 * foreground job, or an agent that is idle, finished or waiting for input
 * (not with a permission dialog open).
 *
 * This is the readiness seam for `surface.is_ready`, `ask` and queue
 * delivery. The layout issue (13) moves the answers `wait`, flows and the
 * prefill give today into one module, `src/agents/readiness.ts`; when it
 * lands, {@link readiness} delegates to it and this file keeps only the
 * PaneIO view (the prompt rules).
 *
 * @module
 */
import { foreground, foregroundGroup } from "../server/pane/proc.ts";
import { type PromptRule, promptState } from "./prompts.ts";

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
