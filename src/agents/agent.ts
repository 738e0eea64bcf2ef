/**
 * What the tracker tracks: one agent's record, the hook frame it is fed,
 * the timing constants of its fusion, and finding an agent's process in a
 * PTY's foreground process group.
 *
 * @module
 */
import type { AgentState, ScreenRules, ScreenVerdict } from "./classify.ts";
import { CLAUDE_SCREEN } from "./claude_screen.ts";
import { CODEX_SCREEN } from "./codex_screen.ts";
import { GEMINI_SCREEN } from "./gemini_screen.ts";
import { OPENCODE_SCREEN } from "./opencode_screen.ts";
import { QWEN_SCREEN } from "./qwen_screen.ts";
import { COPILOT_SCREEN } from "./copilot_screen.ts";
import { detectFamily } from "./detect.ts";
import type { AiFrame } from "./hook.ts";
import type { ProcessInfo } from "../core/pane/proc.ts";

/** Screen rules by agent family: a Map, so a client's tool string ("constructor") finds nothing. */
export const SCREENS = new Map<string, ScreenRules>([
  ["claude", CLAUDE_SCREEN],
  ["codex", CODEX_SCREEN],
  ["gemini", GEMINI_SCREEN],
  ["opencode", OPENCODE_SCREEN],
  ["qwen", QWEN_SCREEN],
  ["copilot", COPILOT_SCREEN],
]);

/** Exit codes of an agent that mean "stopped by a signal", not an error. */
export const SIGNAL_EXITS = new Set([129, 130, 137, 143]);
/** How long after output the screen is classified again. */
export const SCREEN_DEBOUNCE_MS = 60;
/**
 * A hook state younger than this is not overruled by an idle-looking screen,
 * nor by a screen that has looked idle for less (the Stop hook that ends a
 * turn comes from a process the agent starts, and can land after the idle
 * redraw on a busy machine: finishing from the screen then lost its reply).
 */
export const HOOK_GRACE_MS = 1500;
/** How long a process-detected exit waits for the pane's exit code. */
export const EXIT_GRACE_MS = 400;
/** Process detection and stall checks run this often. */
export const SCAN_MS = 1000;

/** The agent process among a PTY's foreground process group's members, if any. */
export function agentProcess(members: ProcessInfo[] | null | undefined) {
  for (const p of members ?? []) {
    const family = detectFamily(p.argv);
    if (family) return { family, pid: p.pid, argv: p.argv };
  }
  return null;
}

const squashed = (t: string) => t.replace(/\s+/g, " ").trim();

/** The screen's last turn is the one the last prompt hook started (its first line echoes the prompt). */
export function showsHookedTurn(a: Agent): boolean {
  const turn = a.screen?.turn;
  if (!turn || !a.lastPrompt) return false;
  return squashed(turn).includes(squashed(a.lastPrompt).slice(0, 40));
}

/** A hook frame as the host received it (validated by the protocol's `AiFrame`). */
export type HookFrame = Partial<AiFrame> & { surface_id: number };

export interface Agent {
  surfaceId: number;
  tool: string;
  pid: number | null;
  hooked: boolean;
  state: AgentState;
  reason: string;
  message: string | null;
  /** The message as the hooks alone left it. */
  hookMessage: string | null;
  activeTool: string | null;
  lastResult: string | null;
  stateSince: number;
  lastActivity: number;
  inTurn: boolean;
  hadTurn: boolean;
  /** State the hooks alone would give, why, and when it was set. */
  hookState: AgentState | null;
  hookReason: string;
  hookAt: number;
  lastHook: { method: string; event: string | null; at: number; params: HookFrame } | null;
  /** The last screen verdict, when it was made, and the first line of the screen's last turn. */
  screen: (ScreenVerdict & { at: number; turn: string | null }) | null;
  /** Since when the screen has shown its current dialog (`screen.dialog`); 0 while it shows none. */
  dialogSince: number;
  /** Since when the screen has looked idle (rule `idle_prompt` or `done`); 0 while it does not. */
  idleSince: number;
  /** Process detection has seen this agent's process (so its absence means it exited). */
  seenProcess: boolean;
  /** What the screen's activity function gave last time. */
  activityMark: string | null;
  /** A process-detected exit waiting briefly for the pane's own exit code. */
  exitTimer: ReturnType<typeof setTimeout> | null;
  /** When paneflow itself delivered an Esc or Ctrl-C to the agent. */
  interruptAt: number;
  /** When the last prompt hook (a turn's start) arrived. */
  promptAt: number;
  /**
   * Without hooks: paneflow delivered an Esc or Ctrl-C during a turn
   * (`interruptPending`), then the screen stopped showing a busy turn
   * (`interrupted`, with the first line of the last turn on screen then). It
   * holds until the screen shows a busy or a different last turn. Interrupted
   * before any output, Claude Code shows no `Interrupted` line (it puts the
   * prompt back into the input box), so this is what tells an interrupt from
   * a finished turn.
   */
  interruptPending: boolean;
  interrupted: { turn: string | null } | null;
  /** The session (Codex: thread) id the hooks report; Codex's title side-thread has another. */
  sessionId: string | null;
  /** The screen's last-turn line when the last prompt hook arrived, and that prompt. */
  turnAtHook: string | null;
  lastPrompt: string | null;
  /** The screen's last-turn line at the previous verdict (no hooks: a new one means a turn ran). */
  seenTurn: string | null | undefined;
  /** No hooks: the last-turn line of the turn the screen last showed finished. */
  endedTurn: string | null;
  why: string;
}

/** Listener for hook prompt submissions (the submit transaction waits on these). */
export type PromptListener = (surfaceId: number, prompt: string) => void;

/** A newly tracked agent: no hook, no screen verdict, no turn yet. */
export function newAgent(id: number, tool: string, pid: number | null): Agent {
  const now = Date.now();
  return {
    surfaceId: id,
    tool,
    pid,
    hooked: false,
    state: "unknown_running",
    reason: "no_hook",
    message: null,
    hookMessage: null,
    activeTool: null,
    lastResult: null,
    stateSince: now,
    lastActivity: now,
    inTurn: false,
    hadTurn: false,
    hookState: null,
    hookReason: "",
    hookAt: 0,
    lastHook: null,
    screen: null,
    dialogSince: 0,
    idleSince: 0,
    seenProcess: false,
    interruptAt: 0,
    promptAt: 0,
    activityMark: null,
    exitTimer: null,
    interruptPending: false,
    interrupted: null,
    sessionId: null,
    turnAtHook: null,
    lastPrompt: null,
    seenTurn: undefined,
    endedTurn: null,
    why: "",
  };
}
