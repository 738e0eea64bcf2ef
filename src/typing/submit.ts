/**
 * Submitting a prompt to an agent as a transaction: paste, wait until the
 * input box shows it, press Enter, and report success only with evidence
 * that the turn started (the UserPromptSubmit hook carrying our prompt, the
 * busy line, or the input box cleared). Enter is retried only while the
 * input box still holds exactly our text, checked again right before the
 * retry is written (never into a dialog that opened meanwhile), and only
 * once the agent has had time to take the first: 0.7 s, 2 s for a hooked
 * agent (its hook is the evidence), and at least four times as long as it
 * took to show the typed text (a loaded machine slows both).
 *
 * @module
 */
import { ErrorCode } from "../spec/codes.ts";
import { RpcError } from "../errors.ts";
import type { AgentTracker } from "../agents/tracker.ts";
import type { PanePool } from "../core/pane/pool.ts";
import { bracketedPaste } from "../core/pane/keys.ts";
import { agentWorking, dialogShown } from "../agents/readiness.ts";

/** How a submit ended. */
export type SubmitStatus = "submitted" | "queued" | "stalled" | "unknown";

/** Result of {@link submitToAgent}. */
export interface SubmitResult {
  status: SubmitStatus;
  attempts: number;
  evidence: string;
  elapsed_ms: number;
}

/** Delay between a pasted payload and its submitting CR: a base growing with size. */
export function submitDelayMs(base: number, bytes: number): number {
  return base + Math.min(1000, Math.floor(bytes / 1024) * 5);
}

/** Prompts larger than this are written to a file and submitted by reference. */
export const LARGE_PROMPT_BYTES = 16 * 1024;

const POLL_MS = 40;
/** Claude Code drops keys sent this soon after a dialog or redraw appears. */
const SETTLE_MS = 150;
const SHOW_TIMEOUT_MS = 2000;
const EVIDENCE_TIMEOUT_MS = 6000;
const RETRY_AFTER_MS = 700;
/**
 * A hooked agent's UserPromptSubmit hook is the evidence, and it comes late
 * on a loaded machine (the agent spawns `paneflow ai-hook`): an Enter
 * pressed again while the first is still being handled submits the prompt
 * twice (Gemini CLI did, at load 10+).
 */
const HOOKED_RETRY_AFTER_MS = 2000;
/** A retry also waits this many times as long as the agent took to show the typed text. */
const ECHO_FACTOR = 4;
const MAX_ATTEMPTS = 3;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const squash = (t: string) => t.replace(/\s+/g, " ").trim();

/**
 * Whether the input box shows `text`, or the placeholder Claude Code (`[Pasted text #1 …]`) or
 * opencode (`[Pasted ~3 lines]`, for 3+ lines or 150+ characters) shows for a long paste.
 */
export function composerHolds(composer: string | null, text: string): boolean {
  if (composer === null) return false;
  const c = squash(composer);
  if (/\[Pasted (text #\d+|~\d+ lines?\])/.test(c)) return true;
  const t = squash(text);
  if (!t) return c === "";
  const tail = t.slice(-40);
  return c.includes(tail) || c.endsWith(t.slice(-Math.min(t.length, c.length)));
}

/** Options for {@link submitToAgent}. */
export interface SubmitOptions {
  pool: Pick<PanePool, "write">;
  agents: AgentTracker;
  id: number;
  text: string;
  bracketed: boolean;
  delayMs: number;
}

type Screen = Awaited<ReturnType<AgentTracker["screenNow"]>>;

/** One submit transaction as it runs: what it saw at the start, and its Enters. */
interface Transaction {
  opts: SubmitOptions;
  started: number;
  /** The screen before the paste. */
  first: Screen;
  stateAtStart: ReturnType<AgentTracker["stateOf"]>;
  /** The agent was in a turn: a taken prompt is queued, not submitted. */
  busy: boolean;
  busyWhy: string;
  /** The UserPromptSubmit hook carried the prompt. */
  hookSeen: boolean;
  /** The input box showed the text before the first Enter. */
  shown: boolean;
  /** How long after an Enter another may be pressed. */
  retryAfter: number;
  attempts: number;
  lastEnter: number;
  /** The input box held the text when last read. */
  holds: boolean;
}

/** Runs the submit transaction against a pane with a known agent. */
export async function submitToAgent(opts: SubmitOptions): Promise<SubmitResult> {
  const { agents, id } = opts;
  const started = Date.now();
  const first = await agents.screenNow(id);
  refuseOnDialog(id, first);
  // A hooked agent's Stop hook ends the turn before Claude Code redraws its idle
  // screen, so its state is trusted over a busy line that is still on screen.
  const stateAtStart = agents.stateOf(id);
  const inTurn = agentWorking(stateAtStart);
  const t: Transaction = {
    opts,
    started,
    first,
    stateAtStart,
    busy: agents.hookedOf(id) ? inTurn : inTurn || first?.verdict?.state === "thinking",
    busyWhy: inTurn ? `state ${stateAtStart}` : `screen rule "${first?.verdict?.rule}"`,
    hookSeen: false,
    shown: false,
    retryAfter: agents.hookedOf(id) ? HOOKED_RETRY_AFTER_MS : RETRY_AFTER_MS,
    attempts: 0,
    lastEnter: 0,
    holds: false,
  };
  const wanted = squash(opts.text);
  const stop = agents.onPrompt((sid, prompt) => {
    if (sid === id && (squash(prompt) === wanted || squash(prompt).includes(wanted.slice(0, 200)))) {
      t.hookSeen = true;
    }
  });
  try {
    await pasteAndShow(t);
    await sleep(Math.max(opts.delayMs, SETTLE_MS));
    await enter(t);
    return await evidence(t);
  } finally {
    stop();
  }
}

/** A permission dialog on screen: the prompt would answer it. */
function refuseOnDialog(id: number, first: Screen): void {
  if (first?.verdict && dialogShown(first.verdict.rule, { trust: true })) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Pane ${id} shows a permission dialog (${
        first.verdict.message ?? "approve a tool call"
      }); answer it with paneflow answer before submitting`,
      { reason: "dialog_open" },
    );
  }
}

/** Pastes the text and waits until the input box shows it; how slowly it did sets when an Enter may be retried. */
async function pasteAndShow(t: Transaction): Promise<void> {
  const { pool, agents, id, text } = t.opts;
  const payload = t.opts.bracketed ? bracketedPaste(text) : text;
  const typedAt = Date.now();
  await pool.write(id, payload);
  const showDeadline = Date.now() + SHOW_TIMEOUT_MS;
  while (Date.now() < showDeadline) {
    const screen = await agents.screenNow(id);
    if (screen && composerHolds(screen.composer, text)) {
      t.shown = true;
      t.retryAfter = Math.max(t.retryAfter, ECHO_FACTOR * (Date.now() - typedAt));
      break;
    }
    if (!screen) break;
    await sleep(POLL_MS);
  }
  t.holds = t.shown;
}

async function enter(t: Transaction): Promise<void> {
  t.attempts++;
  t.lastEnter = Date.now();
  await t.opts.pool.write(t.opts.id, "\r");
}

function result(t: Transaction, status: SubmitStatus, evidence: string): SubmitResult {
  return { status, attempts: t.attempts, evidence, elapsed_ms: Date.now() - t.started };
}

/** After the first Enter: watches for evidence that the turn started, pressing Enter again while the text sits in the input box. */
async function evidence(t: Transaction): Promise<SubmitResult> {
  const { agents, id } = t.opts;
  const deadline = Date.now() + Math.max(EVIDENCE_TIMEOUT_MS, MAX_ATTEMPTS * t.retryAfter + 1000);
  while (Date.now() < deadline) {
    await sleep(POLL_MS);
    if (t.hookSeen) {
      return result(t, t.busy ? "queued" : "submitted", "UserPromptSubmit hook carried the prompt");
    }
    const screen = await agents.screenNow(id);
    if (!screen) {
      // The agent went away after the Enter (e.g. `/exit`): it took the input.
      if (agents.toolOf(id) === null) return result(t, "submitted", "the agent exited after the Enter");
      // No screen rules for this agent: only its hook can tell.
      continue;
    }
    const seen = judgeScreen(t, screen);
    if (seen) return seen;
    if (t.holds && Date.now() - t.lastEnter >= t.retryAfter && t.attempts < MAX_ATTEMPTS) {
      const retried = await retryEnter(t);
      if (retried) return retried;
    }
  }
  if (!agents.rulesOf(id)) {
    return result(
      t,
      "unknown",
      "no UserPromptSubmit hook arrived and paneflow cannot read this agent's screen",
    );
  }
  return t.holds
    ? result(t, "stalled", `the input box still holds the prompt after ${t.attempts} Enter presses`)
    : result(t, "unknown", "no hook, busy line or cleared input box seen");
}

/** What the screen after an Enter proves, or null (notes whether the input box still holds the text). */
function judgeScreen(t: Transaction, screen: NonNullable<Screen>): SubmitResult | null {
  // A dialog replaced the input box (the turn asked for a tool at once): the prompt was taken.
  if (dialogShown(screen.verdict?.rule) && screen.composer === null && t.first?.composer !== null) {
    return result(t, "submitted", "a permission dialog opened after the Enter");
  }
  t.holds = composerHolds(screen.composer, t.opts.text);
  if (t.holds || screen.composer === null) return null;
  if (t.busy) {
    return result(
      t,
      "queued",
      `the agent was busy (${t.busyWhy}) and the input box took the prompt as a queued message`,
    );
  }
  if (t.first?.verdict?.rule === "starting" || screen.verdict?.rule === "starting") {
    return result(t, "queued", "the agent is still starting and queued the prompt");
  }
  if (screen.verdict?.state === "thinking") return result(t, "submitted", "busy line on screen");
  // An empty box that never showed the text (the agent was still drawing itself when it came)
  // is no evidence: wait for the hook or a busy line.
  if (t.shown) return result(t, "submitted", "input box cleared");
  return null;
}

/**
 * Presses Enter again, unless the first was taken meanwhile. The screen the
 * caller judged was read before this decision, and under load a permission
 * dialog can open in between (the first Enter was taken, the redraw lagged):
 * an Enter now would answer it. So the screen is read again right before
 * writing, and Enter is pressed only while the input box still holds the text.
 */
async function retryEnter(t: Transaction): Promise<SubmitResult | null> {
  const { agents, id } = t.opts;
  const fresh = await agents.screenNow(id);
  if (fresh && dialogShown(fresh.verdict?.rule, { trust: true })) {
    return result(
      t,
      "submitted",
      "a permission dialog opened after the Enter (no retry was pressed into it)",
    );
  }
  if (agents.stateOf(id) === "waiting_for_input" && t.stateAtStart !== "waiting_for_input") {
    return result(t, "submitted", "the agent asks for input since the Enter (no retry was pressed into it)");
  }
  if (!t.hookSeen && fresh && composerHolds(fresh.composer, t.opts.text)) await enter(t);
  return null;
}
