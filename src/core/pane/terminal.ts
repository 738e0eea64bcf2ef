/**
 * A pane's headless terminal, and every use of @xterm/headless's private
 * fields in one place (the pinned xterm version): the synchronous parse
 * (`_core._writeBuffer.writeSync`) and the count of rows trimmed off the
 * top of the scrollback (`_core.buffers.normal.lines.onTrim`).
 *
 * @module
 */
import xterm from "@xterm/headless";
import { Scrollback, stagingRows } from "./scrollback.ts";

/** A new pane's terminal. */
export interface PaneTerminal {
  term: xterm.Terminal;
  /** The compact scrollback; null when xterm keeps all of it. */
  scrollback: Scrollback | null;
  /** Parses a chunk synchronously; null when this xterm has no `writeSync`. */
  parseNow: ((data: Uint8Array) => void) | null;
  /**
   * Calls `fn` with the number of rows dropped off the top of xterm's own
   * scrollback (only needed without the compact scrollback).
   */
  onTrim(fn: (rows: number) => void): void;
}

/** A terminal of `cols` x `rows` keeping `scrollback` rows above the screen. */
export function createTerminal(cols: number, rows: number, scrollback: number): PaneTerminal {
  const term = new xterm.Terminal({
    cols,
    rows,
    scrollback: stagingRows(scrollback),
    allowProposedApi: true,
    // xterm logs every parse error; a pane printing binary would write ~5x its
    // output into the host's log.
    logLevel: "off",
  });
  const compact = Scrollback.attach(term, scrollback);
  if (!compact) term.options.scrollback = scrollback;
  // deno-lint-ignore no-explicit-any
  const core = (term as any)._core;
  const writeBuffer = core?._writeBuffer;
  const parseNow = typeof writeBuffer?.writeSync === "function"
    ? (data: Uint8Array) => {
      try {
        writeBuffer.writeSync(data);
      } catch {
        // xterm threw on this chunk: reset the queue writeSync left mid-loop,
        // or every later chunk would be queued and never parsed.
        Object.assign(writeBuffer, {
          _isSyncWriting: false,
          _writeBuffer: [],
          _callbacks: [],
          _syncCalls: 0,
        });
      }
    }
    : null;
  return {
    term,
    scrollback: compact,
    parseNow,
    // xterm has no public event for rows dropped off the top of the scrollback;
    // the line list's own onTrim is the only exact count (pinned xterm version).
    onTrim: (fn) => core?.buffers?.normal?.lines?.onTrim?.(fn),
  };
}
