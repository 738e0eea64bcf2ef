/**
 * Answering an agent's dialog (`surface.answer`, `paneflow answer`): find the
 * dialog on screen with the agent's screen rules, refuse when there is none
 * or it is not the one the caller saw, press the keys the rule's data names
 * for the answer (../agents/dialog.ts) through the typist (./mod.ts), and
 * report whether the dialog left the screen.
 *
 * Keys go only to a dialog that has been on screen a moment (Claude Code
 * drops keys that arrive within ~0.15 s of drawing it); the keys of a
 * multi-key answer go one at a time, each after the agent drew the last
 * one's effect. A press is repeated only when the agent drew nothing at all
 * since it (the key was dropped): a dialog that is still shown while the
 * agent redraws is left alone, as a second press could land in the input
 * box once the dialog goes.
 *
 * @module
 */
import { ErrorCode, ErrorReason } from "../spec/codes.ts";
import { RpcError } from "../errors.ts";
import type { ScreenVerdict } from "../agents/classify.ts";
import { resolveAnswer, type ResolvedAnswer } from "../agents/dialog.ts";
import type { AgentTracker } from "../agents/tracker.ts";
import { pressed } from "./press.ts";

/** What `surface.answer` reports. */
export interface AnswerResult {
  surface_id: number;
  dialog_id: string;
  rule: string;
  question: string | null;
  answer: string;
  option: string | null;
  keys: string[];
  presses: number;
  closed: boolean;
  elapsed_ms: number;
}

/** Options for {@link answerDialog}. */
export interface AnswerOptions {
  agents: AgentTracker;
  id: number;
  /** Presses one named key as a dialog's answer (the typist's `press`). */
  press: (key: string) => Promise<void>;
  /** The pane's output generation now (it moves whenever the agent draws). */
  generation: () => number;
  answer: string;
  /** The dialog the caller saw; another one on screen is refused. */
  dialogId?: string;
}

/** A dialog drawn this recently may drop the keys. */
const SETTLE_MS = 250;
/** A press after which the agent drew nothing for this long was dropped (a loaded worker draws late). */
const DROPPED_AFTER_MS = 2000;
/** How long the keys of one press wait for the agent to draw the previous one. */
const KEY_GAP_MAX_MS = 1000;
/** How long an answered dialog may take to leave the screen. */
const CLOSE_TIMEOUT_MS = 5000;
const MAX_PRESSES = 3;
const POLL_MS = 40;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Shown = { verdict: ScreenVerdict & { dialog: NonNullable<ScreenVerdict["dialog"]> } };

/** The dialog on the pane's screen now, or null. */
async function dialogNow(agents: AgentTracker, id: number): Promise<Shown | null> {
  const v = (await agents.screenNow(id))?.verdict;
  return v?.dialog ? { verdict: v as Shown["verdict"] } : null;
}

function refuse(message: string, reason: string, data: Record<string, unknown> = {}): never {
  throw new RpcError(ErrorCode.InvalidParams, message, { reason, ...data });
}

/** The dialog on screen, checked against the id the caller saw. */
async function currentDialog(opts: AnswerOptions): Promise<Shown> {
  const { agents, id } = opts;
  const shown = await dialogNow(agents, id);
  if (!shown) {
    const tool = agents.toolOf(id);
    refuse(
      tool
        ? `Pane ${id} (${tool}) shows no dialog to answer`
        : `Pane ${id} shows no dialog to answer: no agent paneflow knows runs in it`,
      ErrorReason.NoDialog,
    );
  }
  if (opts.dialogId !== undefined && opts.dialogId !== shown.verdict.dialog.id) {
    refuse(
      `Dialog "${opts.dialogId}" is no longer on pane ${id}; it shows dialog "${shown.verdict.dialog.id}" (${
        shown.verdict.message ?? shown.verdict.rule
      })`,
      ErrorReason.StaleDialog,
      { dialog_id: shown.verdict.dialog.id },
    );
  }
  return shown;
}

/** Waits until the pane's generation moves past `from`, at most `ms`; whether it did. */
async function drawn(opts: AnswerOptions, from: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (opts.generation() !== from) return true;
    await sleep(POLL_MS);
  }
  return opts.generation() !== from;
}

/** Answers the dialog on a pane with a known agent. */
export async function answerDialog(opts: AnswerOptions): Promise<AnswerResult> {
  const { agents, id } = opts;
  const started = Date.now();
  let shown = await currentDialog(opts);
  const dialog = shown.verdict.dialog;
  const spec = agents.rulesOf(id)?.rules.find((r) => r.id === shown.verdict.rule)?.dialog;
  if (!spec) refuse(`Pane ${id} shows no dialog to answer`, ErrorReason.NoDialog);
  let resolved: ResolvedAnswer;
  try {
    resolved = resolveAnswer(spec, dialog.options, opts.answer);
  } catch (e) {
    refuse((e as Error).message, ErrorReason.UnknownOption, { options: dialog.options });
  }
  for (const key of resolved.keys) {
    const bad = pressed(key, "answer");
    if ("error" in bad) throw new Error(`Dialog keys of rule "${shown.verdict.rule}": ${bad.error}`);
  }
  // Settle: the dialog has been up a moment (the tracker knows since when), else wait and look again.
  const known = agents.dialogOf(id);
  const since = known?.id === dialog.id ? known.since : Date.now();
  if (Date.now() - since < SETTLE_MS) {
    await sleep(SETTLE_MS - (Date.now() - since));
    shown = await currentDialog({ ...opts, dialogId: dialog.id });
  }
  let presses = 0;
  let closed = false;
  while (presses < MAX_PRESSES && !closed) {
    presses++;
    const before = opts.generation();
    for (const [i, key] of resolved.keys.entries()) {
      const from = opts.generation();
      await opts.press(key);
      if (i < resolved.keys.length - 1) await drawn(opts, from, KEY_GAP_MAX_MS);
    }
    const pressedAt = Date.now();
    while (Date.now() - pressedAt < CLOSE_TIMEOUT_MS) {
      await sleep(POLL_MS);
      const now = await dialogNow(agents, id);
      if (!now || now.verdict.dialog.id !== dialog.id) {
        closed = true;
        break;
      }
      // Nothing drawn since the press: the agent never saw the keys. Press again.
      if (opts.generation() === before && Date.now() - pressedAt >= DROPPED_AFTER_MS) break;
    }
    if (!closed && opts.generation() !== before) break;
  }
  return {
    surface_id: id,
    dialog_id: dialog.id,
    rule: shown.verdict.rule,
    question: shown.verdict.message,
    answer: opts.answer,
    option: resolved.option,
    keys: resolved.keys,
    presses,
    closed,
    elapsed_ms: Date.now() - started,
  };
}
