/**
 * What the pane worker reads out of a pane's terminal: the buffer with the
 * compact scrollback above it, reads (plain, logical, since a generation),
 * the snapshots `read --since` compares against, and the oldest rows as text.
 *
 * @module
 */
import type { ReadResult } from "./worker_api.ts";
import type { PaneEngine } from "./engine.ts";
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
  engine: PaneEngine;
  snapshots: Snapshot[];
  generation: number;
}

/** The active buffer, with the compact scrollback above it. */
export function buffer(pane: PaneView): BufferLike & { readonly type?: string } {
  return pane.engine.reads();
}

function trimmedOf(pane: PaneView): number {
  return pane.engine.trimmed;
}

export function remember(pane: PaneView): void {
  const last = pane.snapshots.at(-1);
  if (last && last.generation === pane.generation) return;
  const buf = buffer(pane);
  const dropped = pane.snapshots.length >= SNAPSHOTS_KEPT ? pane.snapshots.shift() : undefined;
  pane.snapshots.push(takeSnapshot(buf, pane.generation, trimmedOf(pane), pane.engine.rows, dropped?.hashes));
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
