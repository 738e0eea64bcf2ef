/**
 * Fusing an agent's sources into one state: its hook state, overruled where
 * a newer screen shows what no hook reports (a dialog, an interrupt, an API
 * error, a turn that ended without a Stop hook); without hooks, its screen.
 *
 * @module
 */
import type { AgentState } from "./classify.ts";
import { type Agent, HOOK_GRACE_MS, SCREENS, showsHookedTurn } from "./agent.ts";

/** The hook reason of a turn a hook said was interrupted (Qwen Code); an idle screen does not make it finished. */
export const INTERRUPTED = "interrupted";

/** A screen rule that shows the agent waiting for a prompt, no turn running. */
export const looksIdle = (rule: string | undefined) => rule === "idle_prompt" || rule === "done";

/** What the fusion decides: the state, its reason and message, and why (the agent's `why`). */
export interface Fused {
  state: AgentState;
  reason: string;
  message: string | null;
  why: string;
}

/**
 * The agent's state now, from its hook state (`fromHook`: a hook just set it,
 * so the screen does not overrule it) or, without hooks, from its screen.
 * Updates the turn bookkeeping the next decision needs.
 */
export function fuse(a: Agent, fromHook: boolean): Fused {
  const hook = a.hookState;
  const f = !a.hooked || hook === null ? fromScreen(a) : fromHookState(a, hook, fromHook);
  if (f.state !== "waiting_for_input" && f.state !== "errored") f.message = null;
  return f;
}

/** Without hooks: the screen's verdict, the same turn kept across a redraw of its end. */
function fromScreen(a: Agent): Fused {
  const screen = a.screen;
  let state: AgentState;
  const reason = "no_hook";
  let message = a.message;
  let why: string;
  // A turn that showed its end, caught again half redrawn (its output drawn, its end line not
  // yet: rule "busy_unfinished"), is the same turn, not a new one; a busy line or a new last
  // turn is.
  const redraw = screen?.rule === "busy_unfinished" && screen.turn !== null &&
    screen.turn === a.endedTurn;
  if (screen && redraw) {
    state = a.state;
    message = a.message;
    why = `no hook; screen rule "busy_unfinished" for a turn that has shown its end: a redraw, ` +
      `not a new turn`;
  } else if (screen) {
    if (screen.state === "thinking") a.hadTurn = true;
    // A turn too quick for its busy screen to be seen still shows as a new last turn.
    if (a.tool !== "claude") {
      if (a.seenTurn !== undefined && screen.turn !== null && screen.turn !== a.seenTurn) {
        a.hadTurn = true;
      }
      a.seenTurn = screen.turn;
    }
    state = screen.state === "idle" && a.hadTurn ? "finished" : screen.state;
    if (state === "finished") a.endedTurn = screen.turn;
    else if (screen.state === "thinking") a.endedTurn = null;
    message = screen.message;
    why = `no hook; screen rule "${screen.rule}": ${screen.note}`;
    if (screen.state === "thinking") {
      a.interrupted = null;
    } else if (a.interruptPending) {
      a.interruptPending = false;
      a.interrupted = { turn: screen.turn };
    } else if (a.interrupted && a.interrupted.turn !== screen.turn) {
      // A turn too short for a busy screen to be seen has run since.
      a.interrupted = null;
    }
    if (a.interrupted && screen.rule !== "permission_dialog" && screen.rule !== "interrupted") {
      state = "waiting_for_input";
      message = "Interrupted by the Esc or Ctrl-C paneflow delivered";
      why = `no hook; an interrupt key paneflow delivered ended the turn, and the screen shows no new ` +
        `turn since (rule "${screen.rule}")`;
    }
  } else {
    state = SCREENS.get(a.tool) ? a.state : "unknown_running";
    why = SCREENS.get(a.tool)
      ? "no hook, and no screen rule has matched yet"
      : `no hook, and paneflow has no screen rules for ${a.tool}`;
  }
  return { state, reason, message, why };
}

/** With hooks: the hook's state, unless a screen newer than the hook shows otherwise. */
function fromHookState(a: Agent, hook: AgentState, fromHook: boolean): Fused {
  const now = Date.now();
  const screen = a.screen;
  let state: AgentState = hook;
  let reason = a.hookReason;
  // The hook's own message: a screen override (a moment of busy screen
  // while a dialog draws) must not lose it once the screen agrees again.
  let message = a.hookMessage;
  let why = `hook ${a.lastHook?.event ?? a.lastHook?.method}`;
  const hookAge = now - a.hookAt;
  const screenNewer = screen && screen.at >= a.hookAt;
  if (screen && screenNewer && !fromHook) {
    if (screen.rule === "permission_dialog" && (hook !== "waiting_for_input" || !message)) {
      // A waiting hook that named nothing (Qwen Code) takes the command from the dialog on screen.
      if (hook !== "waiting_for_input") reason = "permission dialog on screen";
      state = "waiting_for_input";
      message = screen.message;
      why = `screen rule "permission_dialog" overrides hook state ${hook}`;
    } else if (
      screen.rule === "interrupted" &&
      (hook === "thinking" || hook === "waiting_for_input" ||
        // A finished hook about another turn, or Gemini's AfterAgent for a turn an Esc cancelled.
        (hook === "finished" && a.tool !== "claude" && hookAge > 300 &&
          (screen.turn !== a.turnAtHook || a.interruptAt > a.promptAt)))
    ) {
      state = "waiting_for_input";
      message = screen.message;
      reason = "interrupted";
      a.inTurn = false;
      a.activeTool = null;
      why = `screen rule "interrupted": ${screen.note}`;
    } else if (
      a.interruptAt > a.hookAt && screen.state !== "thinking" && screen.rule !== "permission_dialog" &&
      (hook === "thinking" || hook === "waiting_for_input")
    ) {
      state = "waiting_for_input";
      message = screen.message ?? "Interrupted by the Esc or Ctrl-C paneflow delivered";
      reason = "interrupted";
      a.inTurn = false;
      a.activeTool = null;
      why = `an interrupt key was delivered ${
        now - a.interruptAt
      } ms ago and the screen shows no busy line (rule "${screen.rule}")`;
    } else if (
      // A busy line after a dialog was answered (no hook says so). After a Stop hook the
      // spinner can stay on screen a while before the idle redraw (longer on a loaded
      // machine): only a busy line that outlives the hook's grace is a new turn.
      screen.state === "thinking" && hook !== "thinking" &&
      hookAge > (hook === "finished" ? HOOK_GRACE_MS : 200)
    ) {
      state = "thinking";
      message = null;
      reason = "busy on screen";
      why = `screen rule "busy" overrides hook state ${hook} (e.g. a dialog was answered)`;
    } else if (
      screen.rule === "api_error" &&
      (hook === "thinking" &&
          (hookAge > HOOK_GRACE_MS || (a.tool !== "claude" && showsHookedTurn(a))) ||
        // Gemini CLI's AfterAgent (and Codex's notify-only launches) say nothing of the error.
        (hook === "finished" && a.tool !== "claude" && hookAge > 300))
    ) {
      state = "errored";
      message = screen.message;
      reason = "API error on screen";
      why = `screen rule "api_error": ${screen.note}`;
    } else if (
      looksIdle(screen.rule) && (hook === "thinking" || hook === "waiting_for_input") &&
      reason !== INTERRUPTED &&
      hookAge > HOOK_GRACE_MS && now - a.idleSince >= HOOK_GRACE_MS
    ) {
      state = "finished";
      message = null;
      reason = "screen idle without a Stop hook";
      a.inTurn = false;
      why = `screen rule "${screen.rule}" shows no busy line ${hookAge} ms after hook state ${hook}, ` +
        `for ${now - a.idleSince} ms`;
    }
  }
  return { state, reason, message, why };
}
