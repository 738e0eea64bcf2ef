/**
 * Keeping a pane's PTY master open until its output is drained and its
 * program has exited: node-pty's socket `destroy` is wrapped (a private
 * field, `_socket`, of the pinned node-pty), and the destroy it asked for
 * runs later, from here.
 *
 * @module
 */
import type { PtyInput } from "./pty_input.ts";
import type { PanePty } from "./host_pty.ts";

/** Quiet time before a socket whose process exited is destroyed. */
const DRAIN_QUIET_MS = 200;
/** How long after the exit a socket still delivering data is kept open. */
const DRAIN_MAX_MS = 2000;
/** Polls for the exit of a program that closed its terminal: first after, and at most every. */
const EXIT_POLL_MS = 2;
const EXIT_POLL_MAX_MS = 50;

/** What the drain guard reads and keeps of a pane (./panes.ts's `Pane` has all of it). */
export interface DrainState {
  pty: PanePty;
  input: PtyInput;
  /** Bytes handed to xterm's async write and not parsed yet. */
  pending: number;
  /** Paused for flow control (xterm's queue is long). */
  paused: boolean;
  /** Paused until the next turn of the worker's event loop. */
  throttled: boolean;
  /** Parses synchronously (null: xterm's async write). */
  parseNow: ((data: Uint8Array) => void) | null;
  deferredDestroy: (() => void) | null;
  drainTimer: ReturnType<typeof setTimeout> | null;
  /** When the PTY last delivered data (ms, performance.now). */
  lastDataAt: number;
  /** When it was last resumed after a turn's pause (ms, performance.now; 0: never paused). */
  resumedAt: number;
  /** When node-pty first tried to destroy the socket after the exit. */
  destroyAskedAt: number;
  /** node-pty reported the program's exit (it has been reaped). */
  reaped: boolean;
  /** The pane was closed: its terminal is gone and nothing waits for its output. */
  disposed: boolean;
}

/**
 * node-pty closes the PTY master too early in two ways, and we hold it open:
 *
 * - On EIO, which comes as soon as the program has closed its end of the
 *   terminal, often before it has exited. Closing the master hangs the
 *   terminal up, and the kernel sends the program SIGHUP: a `cat` that read
 *   EOF and was about to exit 0 is reported killed by SIGHUP (129). So the
 *   master stays open until the program has been reaped, as a terminal
 *   emulator keeps its window until its child exits.
 * - 200 ms after the program exits unless the socket reached EOF. While we
 *   hold the socket paused for flow control, or while it is still delivering
 *   (a busy worker reads late), that would throw away output still in the
 *   kernel buffer. Defer the destroy until the socket has been flowing and
 *   quiet for {@link DRAIN_QUIET_MS} (a socket that keeps delivering, e.g.
 *   from a background process holding the PTY open, at most
 *   {@link DRAIN_MAX_MS}).
 *
 * A closed pane (`dispose`) is torn down at once: its program got SIGHUP anyway.
 */
export function guardDrainOnExit(pane: DrainState) {
  // deno-lint-ignore no-explicit-any
  const socket = (pane.pty as any)._socket;
  if (!socket || typeof socket.destroy !== "function") return;
  const destroy = socket.destroy.bind(socket);
  socket.destroy = (...args: unknown[]) => {
    const now = performance.now();
    if (!pane.destroyAskedAt) pane.destroyAskedAt = now;
    // EIO: every byte has been read (the kernel hands out what is buffered first).
    const eof = (args[0] as { code?: string } | undefined)?.code === "EIO";
    const flowing = !eof && now - pane.lastDataAt < DRAIN_QUIET_MS &&
      now - pane.destroyAskedAt < DRAIN_MAX_MS;
    // Resumed after a turn's pause and not read since: the next poll reads what the kernel holds.
    const unread = !eof && pane.parseNow !== null && pane.resumedAt > pane.lastDataAt;
    if (!pane.disposed && (mustWait(pane) || flowing || unread || programRunning(pane))) {
      pane.deferredDestroy = () => {
        pane.input.close();
        return destroy(...args);
      };
      if (pane.paused || pane.throttled) return socket; // resuming schedules it
      if (flowing || unread || pane.pending > 0) scheduleDeferredDestroy(pane);
      else awaitExit(pane, EXIT_POLL_MS);
      return socket;
    }
    // The master closes now: its number may be reused by the next open.
    pane.input.close();
    return destroy(...args);
  };
  pane.pty.onData(() => scheduleDeferredDestroy(pane));
}

/** Output is held back (flow control) or still being parsed. */
function mustWait(pane: DrainState): boolean {
  return pane.paused || pane.throttled || pane.pending > 0;
}

/**
 * The pane's program has not exited yet (a zombie has: it no longer minds a
 * hang-up). node-pty reports the exit only once the socket is closed, so
 * this asks /proc.
 */
function programRunning(pane: DrainState): boolean {
  if (pane.reaped) return false;
  try {
    const stat = Deno.readTextFileSync(`/proc/${pane.pty.pid}/stat`);
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

export function scheduleDeferredDestroy(pane: DrainState) {
  if (!pane.deferredDestroy) return;
  if (pane.drainTimer !== null) clearTimeout(pane.drainTimer);
  if (pane.disposed) return destroyDeferred(pane);
  // A socket still flowing long after the exit (a background process holding
  // the PTY) is destroyed anyway, unless we hold it paused, or it was resumed
  // and has not been read since: what the kernel holds for it is read in the
  // next poll, after this turn's timers (a flood paused past the exit lost
  // its tail that way under load).
  const late = pane.parseNow !== null && performance.now() - pane.destroyAskedAt > DRAIN_MAX_MS &&
    pane.lastDataAt >= pane.resumedAt;
  pane.drainTimer = setTimeout(() => {
    pane.drainTimer = null;
    if (mustWait(pane)) return scheduleDeferredDestroy(pane);
    awaitExit(pane, EXIT_POLL_MS);
  }, late ? 0 : DRAIN_QUIET_MS);
}

/** Destroys the socket once the program has exited: it may have closed its terminal and live on a while. */
function awaitExit(pane: DrainState, delay: number) {
  if (!programRunning(pane)) return destroyDeferred(pane);
  pane.drainTimer = setTimeout(() => {
    pane.drainTimer = null;
    if (mustWait(pane)) return scheduleDeferredDestroy(pane);
    awaitExit(pane, Math.min(2 * delay, EXIT_POLL_MAX_MS));
  }, delay);
}

function destroyDeferred(pane: DrainState) {
  const destroy = pane.deferredDestroy;
  pane.deferredDestroy = null;
  destroy?.();
}
