/**
 * Reading text out of a terminal buffer: the newest lines, search, modes.
 *
 * Lines are screen rows, oldest first, right-trimmed; blank rows below the
 * last written row are not counted. Search joins soft-wrapped rows so a long
 * line matches as a whole and reports the number of its first row.
 *
 * @module
 */
import { lineHash, textHash } from "./row_hash.ts";

/** The part of xterm's `IBuffer` this module needs. */
export interface BufferLike {
  readonly length: number;
  readonly baseY: number;
  readonly cursorY: number;
  readonly cursorX: number;
  getLine(
    y: number,
  ): { readonly isWrapped: boolean; translateToString(trimRight?: boolean): string } | undefined;
  /** {@link textHash} of row `y`'s text where the buffer knows it without the string; null: hash the text. */
  rowHash?(y: number): number | null;
}

/** The part of a pane's engine (./engine.ts) {@link snapshotModes} needs. */
export interface TerminalLike {
  modes(): { readonly bracketedPaste: boolean; readonly applicationCursor: boolean };
  readonly active: { readonly type: string; readonly cursorX: number; readonly cursorY: number };
}

/**
 * A row's text. xterm's `trimRight` only drops cells never written to, so
 * spaces a program wrote (padding, a prompt's trailing blank) are trimmed
 * here, unless the row wraps on: then they are part of the logical line.
 */
function rowText(buf: BufferLike, y: number, keepSpaces = false): string {
  const text = buf.getLine(y)?.translateToString(true) ?? "";
  return keepSpaces ? text : text.replace(/ +$/, "");
}

/** Number of rows holding content: up to the last non-blank row or the cursor. */
export function contentRows(buf: BufferLike): number {
  const cursorRow = buf.baseY + buf.cursorY;
  for (let y = buf.length - 1; y > cursorRow; y--) {
    if (rowText(buf, y) !== "") return y + 1;
  }
  for (let y = cursorRow; y >= 0; y--) {
    if (rowText(buf, y) !== "") return y + 1;
  }
  return 0;
}

/** The `count` newest rows, skipping `offset` rows back from the end. */
export function readLines(buf: BufferLike, count: number, offset: number) {
  const total = contentRows(buf);
  const outOfRange = offset > 0 && offset >= total;
  const end = Math.max(0, total - offset);
  const start = Math.max(0, end - count);
  const lines: string[] = [];
  for (let y = start; y < end; y++) lines.push(rowText(buf, y));
  return { lines, total_lines: total, eof: start === 0, out_of_range: outOfRange };
}

/**
 * Like {@link readLines}, but over logical lines: a row that soft-wraps is
 * joined with its continuation rows, so a long line reads (and matches) as one.
 */
export function readLogicalLines(buf: BufferLike, count: number, offset: number) {
  const total = contentRows(buf);
  const starts: number[] = [];
  for (let y = 0; y < total; y++) if (y === 0 || !buf.getLine(y)?.isWrapped) starts.push(y);
  const n = starts.length;
  const outOfRange = offset > 0 && offset >= n;
  const end = Math.max(0, n - offset);
  const start = Math.max(0, end - count);
  const lines: string[] = [];
  for (let i = start; i < end; i++) {
    const last = (starts[i + 1] ?? total) - 1;
    let text = "";
    for (let y = starts[i]; y <= last; y++) text += rowText(buf, y, y < last);
    lines.push(text);
  }
  return { lines, total_lines: n, eof: start === 0, out_of_range: outOfRange };
}

/** Case-insensitive substring search over logical (unwrapped) lines. */
export function searchLines(buf: BufferLike, pattern: string, max: number) {
  const needle = pattern.toLowerCase();
  const total = contentRows(buf);
  const hits: { line: number; text: string }[] = [];
  let y = 0;
  while (y < total && hits.length < max) {
    const first = y;
    let text = rowText(buf, y, true);
    y++;
    while (y < total && buf.getLine(y)?.isWrapped) {
      text += rowText(buf, y, true);
      y++;
    }
    text = text.replace(/ +$/, "");
    if (text.toLowerCase().includes(needle)) hits.push({ line: first, text });
  }
  return hits;
}

/** Terminal modes a writer needs to know about. */
export function snapshotModes(term: TerminalLike) {
  const buf = term.active;
  const modes = term.modes();
  return {
    bracketed_paste: modes.bracketedPaste,
    alternate_screen: buf.type === "alternate",
    application_cursor: modes.applicationCursor,
    cursor: { x: buf.cursorX, y: buf.cursorY },
  };
}

/** Row hashes of a buffer at one output generation, for incremental reads. */
export interface Snapshot {
  generation: number;
  bufferType: string;
  /** Absolute index (rows ever trimmed + row) of `hashes[0]`. */
  start: number;
  hashes: Uint32Array;
}

/** Rows (beyond the screen) hashed per snapshot; older rows count as unchanged. */
export const SNAPSHOT_WINDOW = 500;

/**
 * {@link textHash} of row `y`'s text as {@link rowText} gives it, from the
 * compact scrollback's bytes or xterm's cells where it can (no string per
 * row: every `read` takes a snapshot of ~550 rows, and a poller reading 20
 * flooding panes every 50 ms made that a tenth of the worker's time).
 */
function rowHash(buf: BufferLike, y: number): number {
  const known = buf.rowHash?.(y);
  if (known !== undefined && known !== null) return known;
  const line = buf.getLine(y) as
    | { hash?(): number; _line?: Parameters<typeof lineHash>[0]; translateToString(trim: boolean): string }
    | undefined;
  if (!line) return textHash("");
  if (typeof line.hash === "function") return line.hash();
  const cells = line._line ? lineHash(line._line) : null;
  return cells ?? textHash(line.translateToString(true));
}

/**
 * Hashes the newest rows of `buf`; `trimmed` is how many rows scrolled out
 * for good; into `reuse` when it has the length needed.
 */
export function takeSnapshot(
  buf: BufferLike & { readonly type?: string },
  generation: number,
  trimmed: number,
  screenRows: number,
  reuse?: Uint32Array,
): Snapshot {
  const total = contentRows(buf);
  const from = Math.max(0, total - screenRows - SNAPSHOT_WINDOW);
  // `reuse`: a dropped snapshot's hashes, when they are the length needed (a pane with its history
  // full always needs the same): no 2 KB of garbage per read (see ./release.ts).
  const hashes = reuse?.length === total - from ? reuse : new Uint32Array(total - from);
  for (let y = from; y < total; y++) hashes[y - from] = rowHash(buf, y);
  return { generation, bufferType: buf.type ?? "normal", start: trimmed + from, hashes };
}

/**
 * Rows added or changed since `snap`: rows past its end are added; rows it
 * hashed whose text differs are changed (a full-screen app redrawing a row
 * changes it; rows it erased come back as ""). Line numbers are 1-based over
 * the retained rows, like `search`. At most `count` of the newest are kept.
 */
export function changedSince(
  buf: BufferLike & { readonly type?: string },
  trimmed: number,
  snap: Snapshot,
  count: number,
): { changed: { line: number; text: string }[]; total_lines: number; truncated: boolean } {
  const total = contentRows(buf);
  const snapEnd = snap.start + snap.hashes.length;
  const until = Math.max(total, Math.min(buf.length, snapEnd - trimmed));
  const changed: { line: number; text: string }[] = [];
  for (let y = Math.max(0, snap.start - trimmed); y < until; y++) {
    const abs = trimmed + y;
    if (abs >= snapEnd || rowHash(buf, y) !== snap.hashes[abs - snap.start]) {
      changed.push({ line: y + 1, text: rowText(buf, y) });
    }
  }
  const truncated = changed.length > count;
  return { changed: truncated ? changed.slice(-count) : changed, total_lines: total, truncated };
}
