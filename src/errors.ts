/**
 * The two error roots: {@link UsageError} for bad user input (exit 2) and
 * {@link RpcError} for everything that crosses the socket. {@link CliFailure}
 * carries an explicit exit code (1, 3 or 4) for the rest.
 *
 * @module
 */
import { ErrorCode, ErrorReason, ExitCode } from "./spec/codes.ts";

/** Bad command-line input: exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
  readonly exitCode: number = ExitCode.Usage;
}

/** A failure with an exit code chosen by the verb; `options.cause` keeps the error it wraps. */
export class CliFailure extends Error {
  override name = "CliFailure";
  constructor(message: string, readonly exitCode: number = ExitCode.Failure, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * A JSON-RPC error, on either side of the socket. `options.cause` keeps the
 * error it wraps (host side: the log shows it, the wire never does).
 */
export class RpcError extends Error {
  override name = "RpcError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: { reason?: string; [k: string]: unknown },
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  /** The exit code a CLI verb should give for this error. */
  get exitCode(): number {
    const reason = this.data?.reason;
    if (reason === ErrorReason.SurfaceNotFound || reason === ErrorReason.WorkspaceNotFound) {
      return ExitCode.NotFound;
    }
    if (reason === ErrorReason.Timeout) return ExitCode.Timeout;
    if (this.code === ErrorCode.InvalidParams && !reason) return ExitCode.Usage;
    return ExitCode.Failure;
  }
}

/** What a "not found" (exit 3) error adds: where the panes and workspaces are listed. */
export const LIST_HINT = "list them with: paneflow ls --all --human";

/**
 * Maps any thrown value to one stderr line and an exit code. Our errors are
 * told by the exit code they carry, not by their class: in the bundled CLI
 * (scripts/build.ts) each verb file holds its own copy of these classes.
 */
export function describeError(err: unknown): { message: string; exitCode: number } {
  const exitCode = err instanceof Error ? (err as Error & { exitCode?: unknown }).exitCode : undefined;
  if (err instanceof Error && typeof exitCode === "number") {
    // "No pane matches ...", "No workspace 5": say where to look.
    const hint = exitCode === ExitCode.NotFound && /^No /.test(err.message) ? `; ${LIST_HINT}` : "";
    return { message: `${err.message}${hint}`, exitCode };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { message: `Internal error: ${message}`, exitCode: ExitCode.Failure };
}

/** How many wrapped errors {@link errorChain} follows before it stops. */
const CHAIN_DEPTH = 8;

/**
 * An error's stack, then the stack of each error it wraps (`cause`), one
 * "caused by:" block each: a log line that leads to where it went wrong.
 */
export function errorChain(err: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  for (let e = err; e !== undefined && !seen.has(e) && parts.length < CHAIN_DEPTH;) {
    seen.add(e);
    const text = e instanceof Error ? e.stack ?? `${e.name}: ${e.message}` : String(e);
    parts.push(parts.length ? `caused by: ${text}` : text);
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join("\n");
}
