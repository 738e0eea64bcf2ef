/**
 * Why an op on a pane failed, as a value. An Error posted between threads
 * loses its class and fields, so a pane worker posts a {@link PaneFailure}
 * (code, message, stack) and the pool rebuilds it into a {@link PaneError}
 * whose `cause` carries the worker's stack; callers match on `code`, never
 * on the message.
 *
 * @module
 */
import { errorChain } from "../../errors.ts";

/** What went wrong with an op on a pane. */
export const PaneErrorCode = {
  /** The pane's program has exited (its terminal is closed): nothing more is written to it. */
  Exited: "exited",
  /** The pane's program stopped reading its input part way through a write. */
  Stalled: "stalled",
  /** The worker holds no pane of that id (it was disposed, or never spawned there). */
  NoPane: "no_pane",
  /** The pane's worker failed (an uncaught exception): its panes are gone. */
  WorkerFailed: "worker_failed",
  /** The pane's worker did not answer within its deadline. */
  NoAnswer: "no_answer",
  /** The host is stopping: the workers are ended. */
  Stopping: "stopping",
  /** Anything else (a failed system call, a bug): the message and the worker's stack say what. */
  Internal: "internal",
} as const;
/** One of {@link PaneErrorCode}'s values. */
export type PaneErrorCode = typeof PaneErrorCode[keyof typeof PaneErrorCode];

/** A failed op as it crosses postMessage. */
export interface PaneFailure {
  code: PaneErrorCode;
  message: string;
  /** Where it was thrown in the worker, with what it wrapped (`errorChain`). */
  stack?: string;
}

/** An op on a pane failed; `code` says why. */
export class PaneError extends Error {
  override name = "PaneError";
  constructor(readonly code: PaneErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** Whether `err` is a {@link PaneError} of `code`. */
export function isPaneError(err: unknown, code: PaneErrorCode): err is PaneError {
  return err instanceof PaneError && err.code === code;
}

/** A thrown value as the worker posts it: a {@link PaneError} keeps its code, anything else is `internal`. */
export function toFailure(err: unknown): PaneFailure {
  const code = err instanceof PaneError ? err.code : PaneErrorCode.Internal;
  if (!(err instanceof Error)) return { code, message: String(err) };
  return { code, message: err.message, stack: errorChain(err) };
}

/** A posted failure rebuilt on the main thread: its `cause` is the worker's error, with the worker's stack. */
export function fromFailure(failure: PaneFailure): PaneError {
  const origin = new Error(failure.message);
  if (failure.stack) origin.stack = `in the pane worker: ${failure.stack}`;
  return new PaneError(failure.code, failure.message, { cause: origin });
}
