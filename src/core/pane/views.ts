/**
 * What the pane worker reads out of a pane's terminal: the buffer with the
 * compact scrollback above it, reads (plain, logical, since a generation),
 * the snapshots `read --since` compares against, and the oldest rows as text.
 *
 * @module
 */
import type xterm from "@xterm/headless";
import type { ReadResult } from "./worker_api.ts";
import type { Scrollback } from "./scrollback.ts";
import {
  type BufferLike,
  changedSince,
  readLines,
  readLogicalLines,
  type Snapshot,
  takeSnapshot,
} from "./screen.ts";

const SNAPSHOTS_KEPT = 16;

/** The parts of a worker pane these reads look at. */
export interface PaneView {
  term: xterm.Terminal;
  scrollback: Scrollback | null;
  trimmed: number;
  snapshots: Snapshot[];
  generation: number;
}

/** The active buffer, with the compact scrollback above it. */
export function buffer(pane: PaneView): BufferLike & { readonly type?: string } {
  const active = pane.term.buffer.active;
  return pane.scrollback ? pane.scrollback.buffer(active) : active;
}

function trimmedOf(pane: PaneView): number {
  if (pane.term.buffer.active.type !== "normal") return 0;
  return pane.scrollback ? pane.scrollback.trimmed : pane.trimmed;
}

export function remember(pane: PaneView): void {
  const last = pane.snapshots.at(-1);
  if (last && last.generation === pane.generation) return;
  const buf = buffer(pane);
  const dropped = pane.snapshots.length >= SNAPSHOTS_KEPT ? pane.snapshots.shift() : undefined;
  pane.snapshots.push(takeSnapshot(buf, pane.generation, trimmedOf(pane), pane.term.rows, dropped?.hashes));
}

export function read(
  pane: PaneView,
  lines: number,
  offset: number,
  since?: number,
  join?: boolean,
): ReadResult {
  const buf = buffer(pane);
  let result: ReadResult;
  if (since === undefined) {
    const r = join ? readLogicalLines(buf, lines, offset) : readLines(buf, lines, offset);
    result = { ...r, generation: pane.generation };
  } else {
    const snap = pane.snapshots.find((s) => s.generation === since && s.bufferType === buf.type);
    if (snap) {
      const { changed, total_lines, truncated } = changedSince(buf, trimmedOf(pane), snap, lines);
      result = {
        lines: changed.map((c) => c.text),
        changed,
        total_lines,
        eof: !truncated,
        out_of_range: false,
        generation: pane.generation,
        reset: false,
      };
    } else {
      const full = readLines(buf, lines, 0);
      const first = full.total_lines - full.lines.length;
      result = {
        ...full,
        changed: full.lines.map((text, i) => ({ line: first + i + 1, text })),
        generation: pane.generation,
        reset: true,
      };
    }
  }
  return result;
}

/** The newest `n` rows of the compact scrollback (older than xterm's own buffer), as text. */
export function olderRows(pane: PaneView, n: number): string[] {
  if (!pane.scrollback) return [];
  const all = buffer(pane);
  const stored = all.length - pane.term.buffer.normal.length;
  const rows: string[] = [];
  for (let y = Math.max(0, stored - n); y < stored; y++) {
    rows.push(all.getLine(y)?.translateToString(true) ?? "");
  }
  return rows;
}
