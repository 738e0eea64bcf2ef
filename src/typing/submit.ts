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

/** Runs the submit transaction against a pane with a known agent. */
export async function submitToAgent(opts: SubmitOptions): Promise<SubmitResult> {
  const { pool, agents, id, text } = opts;
  const started = Date.now();
  const first = await agents.screenNow(id);
  if (first?.verdict && dialogShown(first.verdict.rule, { trust: true })) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Pane ${id} shows a permission dialog (${
        first.verdict.message ?? "approve a tool call"
      }); answer it with paneflow answer before submitting`,
      { reason: "dialog_open" },
    );
  }
  // A hooked agent's Stop hook ends the turn before Claude Code redraws its idle
  // screen, so its state is trusted over a busy line that is still on screen.
  const stateAtStart = agents.stateOf(id);
  const inTurn = agentWorking(stateAtStart);
  const busy = agents.hookedOf(id) ? inTurn : inTurn || first?.verdict?.state === "thinking";
  const busyWhy = inTurn ? `state ${stateAtStart}` : `screen rule "${first?.verdict?.rule}"`;
  let hookSeen = false;
  const wanted = squash(text);
  const stop = agents.onPrompt((sid, prompt) => {
    if (sid === id && (squash(prompt) === wanted || squash(prompt).includes(wanted.slice(0, 200)))) {
      hookSeen = true;
    }
  });
  try {
    const payload = opts.bracketed ? bracketedPaste(text) : text;
    const typedAt = Date.now();
    await pool.write(id, payload);
    // Wait until the input box shows the text before pressing Enter.
    const showDeadline = Date.now() + SHOW_TIMEOUT_MS;
    let shown = false;
    // How slowly the agent answers keys now: an Enter is retried only well after that.
    let retryAfter = agents.hookedOf(id) ? HOOKED_RETRY_AFTER_MS : RETRY_AFTER_MS;
    while (Date.now() < showDeadline) {
      const screen = await agents.screenNow(id);
      if (screen && composerHolds(screen.composer, text)) {
        shown = true;
        retryAfter = Math.max(retryAfter, ECHO_FACTOR * (Date.now() - typedAt));
        break;
      }
      if (!screen) break;
      await sleep(POLL_MS);
    }
    await sleep(Math.max(opts.delayMs, SETTLE_MS));
    let attempts = 0;
    let lastEnter = 0;
    const enter = async () => {
      attempts++;
      lastEnter = Date.now();
      await pool.write(id, "\r");
    };
    await enter();
    const deadline = Date.now() + Math.max(EVIDENCE_TIMEOUT_MS, MAX_ATTEMPTS * retryAfter + 1000);
    let holds = shown;
    while (Date.now() < deadline) {
      await sleep(POLL_MS);
      const result = (status: SubmitStatus, evidence: string): SubmitResult => ({
        status,
        attempts,
        evidence,
        elapsed_ms: Date.now() - started,
      });
      if (hookSeen) return result(busy ? "queued" : "submitted", "UserPromptSubmit hook carried the prompt");
      const screen = await agents.screenNow(id);
      if (!screen) {
        // The agent went away after the Enter (e.g. `/exit`): it took the input.
        if (agents.toolOf(id) === null) {
          return result("submitted", "the agent exited after the Enter");
        }
        // No screen rules for this agent: only its hook can tell.
        continue;
      }
      // A dialog replaced the input box (the turn asked for a tool at once): the prompt was taken.
      if (
        dialogShown(screen.verdict?.rule) && screen.composer === null && first?.composer !== null
      ) {
        return result("submitted", "a permission dialog opened after the Enter");
      }
      holds = composerHolds(screen.composer, text);
      if (!holds && screen.composer !== null) {
        if (busy) {
          return result(
            "queued",
            `the agent was busy (${busyWhy}) and the input box took the prompt as a queued message`,
          );
        }
        if (first?.verdict?.rule === "starting" || screen.verdict?.rule === "starting") {
          return result("queued", "the agent is still starting and queued the prompt");
        }
        if (screen.verdict?.state === "thinking") return result("submitted", "busy line on screen");
        // An empty box that never showed the text (the agent was still drawing itself when it came)
        // is no evidence: wait for the hook or a busy line.
        if (shown) return result("submitted", "input box cleared");
      }
      if (holds && Date.now() - lastEnter >= retryAfter && attempts < MAX_ATTEMPTS) {
        // The screen above was read before this decision, and under load a permission dialog can open
        // in between (the first Enter was taken, the redraw lagged): an Enter now would answer it.
        // Read again right before writing, and press only while the input box still holds the text.
        const fresh = await agents.screenNow(id);
        if (fresh && dialogShown(fresh.verdict?.rule, { trust: true })) {
          return result(
            "submitted",
            "a permission dialog opened after the Enter (no retry was pressed into it)",
          );
        }
        if (agents.stateOf(id) === "waiting_for_input" && stateAtStart !== "waiting_for_input") {
          return result(
            "submitted",
            "the agent asks for input since the Enter (no retry was pressed into it)",
          );
        }
        if (!hookSeen && fresh && composerHolds(fresh.composer, text)) await enter();
      }
    }
    if (!agents.rulesOf(id)) {
      return {
        status: "unknown",
        attempts,
        evidence: "no UserPromptSubmit hook arrived and paneflow cannot read this agent's screen",
        elapsed_ms: Date.now() - started,
      };
    }
    return {
      status: holds ? "stalled" : "unknown",
      attempts,
      evidence: holds
        ? `the input box still holds the prompt after ${attempts} Enter presses`
        : "no hook, busy line or cleared input box seen",
      elapsed_ms: Date.now() - started,
    };
  } finally {
    stop();
  }
}
