/**
 * One way to type into a pane. The socket's `send_text` and
 * `send_keystroke`, `up`'s prompt prefill, PaneIO's queue delivery and `ask`
 * (so flows' steps, which go through those), ptywright sessions' input
 * actions (so adapters' plans) all write through a {@link Typist}, and each
 * says what it wants:
 *
 * ```ts
 * await typist.write(s, "ls", "keys");                       // the bytes as given
 * await typist.write(s, text, "bracketed");                  // one bracketed paste, whatever the program asked
 * await typist.press(s, "esc", "keystroke");                 // a named key (the tracker hears of it)
 * await typist.answer(s, "yes");                             // the keys that answer the agent's dialog
 * const t = await typist.type(s, { text, as: "paste", submit: true }); // send --submit
 * // t.agent: the agent the submit transaction ran for (t.transaction says how it ended), or null
 * ```
 *
 * With `submit`, a pane that holds an agent gets the submit transaction
 * (./submit.ts; a prompt over 16 KiB goes by reference to a file that is
 * deleted with the pane); any other program gets the text and an Enter. The
 * framing (bracketed paste, its terminator stripped from the text) is the
 * pane machinery's (../core/pane/keys.ts).
 *
 * @module
 */
import { ErrorCode, ErrorReason, MAX_SEND_BYTES } from "../spec/codes.ts";
import { RpcError } from "../errors.ts";
import type { AgentTracker } from "../agents/tracker.ts";
import type { PanePool } from "../core/pane/pool.ts";
import type { Surface } from "../core/registry.ts";
import { bracketedPaste } from "../core/pane/keys.ts";
import { type Press, pressed } from "./press.ts";
import { answerDialog, type AnswerResult } from "./answer.ts";
import { LARGE_PROMPT_BYTES, submitDelayMs, type SubmitResult, submitToAgent } from "./submit.ts";
import { PromptFiles } from "./prompt_files.ts";

export type { SubmitResult, SubmitStatus } from "./submit.ts";
export type { AnswerResult } from "./answer.ts";
export { type Press, pressed } from "./press.ts";

/**
 * How text goes into the pane:
 * - `keys`: the bytes as given (`send`, ptywright's `text` and `paste`, a named key);
 * - `paste`: one bracketed paste when the program enabled bracketed paste, else as given
 *   (`send --paste`, `send --submit`);
 * - `lines`: as a command typed at a prompt: pasted (when enabled) only if it spans lines, else
 *   typed, with a submitting Enter in the same write (PaneIO's delivery and `ask`);
 * - `bracketed`: one bracketed paste whatever the program asked for (ptywright's
 *   `bracketed_paste`).
 */
export type Entry = "keys" | "paste" | "lines" | "bracketed";

/** What {@link Typist.type} is asked to do. */
export interface TypeRequest {
  text: string;
  as: Entry;
  /** Submit it: the agent's submit transaction when the pane holds one, else an Enter after the text. */
  submit?: boolean;
  /**
   * How hard to look for an agent the tracker has not seen yet before submitting: `full`
   * (default) scans the pane's processes, `quick` only the foreground group's leader and its
   * children (cheap enough for every queued message), `done` trusts the caller's own check.
   */
  detect?: "full" | "quick" | "done";
  /** The pane's terminal modes, when the caller asked for them ahead. */
  modes?: { bracketed_paste: boolean };
}

/** What {@link Typist.type} did. */
export interface Typed {
  /** The text's size in bytes of UTF-8. */
  bytes: number;
  /** What went into the pane: the text, or the sentence that refers to the file a large prompt went to. */
  typed: string;
  /** Whether it went in a bracketed paste. */
  bracketed: boolean;
  /** Whether an Enter followed it (for an agent: whether the transaction saw the turn start or queue). */
  submitted: boolean;
  /** The agent the submit transaction ran for, or null (no submit, or no agent). */
  agent: string | null;
  /** How the transaction ended, with an agent. */
  transaction: SubmitResult | null;
  /** The file a large prompt went to by reference, or null. */
  via_file: string | null;
}

/** What a {@link Typist} needs of the host. */
export interface TypingParts {
  pool: Pick<PanePool, "write" | "modes">;
  agents: AgentTracker;
  /** The base of the delay between a paste and its submitting Enter (config `submit_paste_delay_ms`). */
  submitDelayMs: number;
  /** Where large prompts are written (the host's `prompts/` beside its socket). */
  promptDir: string;
  /** Why a submit to this pane's agent is refused (its budget is spent), or null. */
  refuse?: (surfaceId: number) => string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `s`, or the error that says its program has exited and it can no longer be written. */
export function writable(s: Surface): Surface {
  if (s.exit) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Pane ${s.id} has exited (exit code ${s.exit.exit_code}); it can be read but not written`,
      { reason: ErrorReason.Exited },
    );
  }
  return s;
}

/** Types, pastes and submits into the host's panes (one per host). */
export class Typist {
  readonly #files: PromptFiles;

  constructor(private readonly _parts: TypingParts) {
    this.#files = new PromptFiles(_parts.promptDir);
  }

  /**
   * Writes `text` into the pane as `as` says, with no checks and no Enter
   * added (the caller has its own limits and errors); returns whether it went
   * in a bracketed paste.
   */
  async write(s: Surface, text: string, as: Entry = "keys"): Promise<boolean> {
    const bracketed = await this.#entered(s, text, as);
    const payload = bracketed ? bracketedPaste(text) : text;
    if (payload) await this._parts.pool.write(s.id, payload);
    return bracketed;
  }

  /**
   * Presses the named key `name` as `as` says, in the pane's cursor mode
   * now, and tells the agent tracker (an Esc or Ctrl-C during a turn is an
   * interrupt). The caller checks the name first ({@link pressed}): a bad one
   * is thrown here as is.
   */
  async press(s: Surface, name: string, as: Press): Promise<void> {
    const key = pressed(name, as, await this._parts.pool.modes(s.id));
    if ("error" in key) throw new Error(key.error);
    await this._parts.pool.write(s.id, key.bytes);
    this._parts.agents.noteKey(s.id, name);
  }

  /**
   * Answers the dialog an agent shows in the pane (`surface.answer`): the
   * keys the screen rules name for `answer`, pressed as ./answer.ts says.
   * With `dialogId`, a different dialog on screen is refused.
   */
  async answer(s: Surface, answer: string, dialogId?: string): Promise<AnswerResult> {
    writable(s);
    await this._parts.agents.detectUntracked([s], true);
    return await answerDialog({
      agents: this._parts.agents,
      id: s.id,
      press: (key) => this.press(s, key, "answer"),
      generation: () => s.generation,
      answer,
      dialogId,
    });
  }

  /**
   * Types `text` as `req` says, at most 64 KiB of it into a live pane, and
   * submits it when asked: the submit transaction for an agent, else an Enter.
   */
  async type(s: Surface, req: TypeRequest): Promise<Typed> {
    const { pool, agents } = this._parts;
    writable(s);
    const bytes = new TextEncoder().encode(req.text).length;
    if (bytes > MAX_SEND_BYTES) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        `"text": payload is ${bytes} bytes; the limit is ${MAX_SEND_BYTES}`,
      );
    }
    const delayMs = submitDelayMs(this._parts.submitDelayMs, bytes);
    const none = { agent: null, transaction: null, via_file: null };
    if (!req.submit) {
      const bracketed = await this.#entered(s, req.text, req.as, req.modes);
      await this.write(s, req.text, bracketed ? "bracketed" : "keys");
      return { bytes, typed: req.text, bracketed, submitted: false, ...none };
    }
    const modes = req.modes ?? await pool.modes(s.id);
    // An agent started moments ago may not have been scanned yet.
    if (req.detect !== "done") await agents.detectUntracked([s], req.detect === "quick");
    const agent = agents.toolOf(s.id);
    const refused = agent ? this._parts.refuse?.(s.id) : null;
    if (refused) throw new RpcError(ErrorCode.Permission, refused, { reason: "over_budget" });
    if (agent) {
      let text = req.text;
      let viaFile: string | null = null;
      if (bytes > LARGE_PROMPT_BYTES) {
        viaFile = await this.#files.write(s.id, req.text);
        text = `Read the file ${viaFile} and follow the instructions in it.`;
      }
      const r = await submitToAgent({
        pool,
        agents,
        id: s.id,
        text,
        bracketed: modes.bracketed_paste,
        delayMs,
      });
      return {
        bytes,
        typed: text,
        bracketed: modes.bracketed_paste,
        submitted: r.status === "submitted" || r.status === "queued",
        agent,
        transaction: r,
        via_file: viaFile,
      };
    }
    const bracketed = await this.#entered(s, req.text, req.as, modes);
    if (!bracketed && req.as === "lines") {
      // Typed and Enter in one write: what the terminal's line discipline gets is the same.
      await pool.write(s.id, `${req.text}\r`);
    } else {
      await this.write(s, req.text, bracketed ? "bracketed" : "keys");
      await sleep(delayMs);
      await pool.write(writable(s).id, "\r");
    }
    return { bytes, typed: req.text, bracketed, submitted: true, ...none };
  }

  /** Pane `id` has closed: its prompt files go. */
  closed(id: number): Promise<void> {
    return this.#files.closed(id);
  }

  /** The host is stopping: every prompt file goes. */
  dispose(): Promise<void> {
    return this.#files.clear();
  }

  /** Whether `text` entered `as` goes in a bracketed paste (the pane's modes are asked only when that depends on them). */
  async #entered(
    s: Surface,
    text: string,
    as: Entry,
    modes?: { bracketed_paste: boolean },
  ): Promise<boolean> {
    switch (as) {
      case "keys":
        return false;
      case "bracketed":
        return true;
      case "lines":
        if (!text.includes("\n")) return false;
    }
    return (modes ?? await this._parts.pool.modes(s.id)).bracketed_paste;
  }
}
