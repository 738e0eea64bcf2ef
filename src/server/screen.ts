/**
 * Reading text out of a terminal buffer: the newest lines, search, modes.
 *
 * Lines are screen rows, oldest first, right-trimmed; blank rows below the
 * last written row are not counted. Search joins soft-wrapped rows so a long
 * line matches as a whole and reports the number of its first row.
 *
 * @module
 */

/** The part of xterm's `IBuffer` this module needs. */
export interface BufferLike {
  readonly length: number;
  readonly baseY: number;
  readonly cursorY: number;
  readonly cursorX: number;
  getLine(
    y: number,
  ): { readonly isWrapped: boolean; translateToString(trimRight?: boolean): string } | undefined;
}

/** The part of xterm's `Terminal` {@link snapshotModes} needs. */
export interface TerminalLike {
  readonly modes: {
    readonly bracketedPasteMode: boolean;
    readonly applicationCursorKeysMode: boolean;
  };
  readonly buffer: { readonly active: BufferLike & { readonly type: string } };
}

function rowText(buf: BufferLike, y: number): string {
  return buf.getLine(y)?.translateToString(true) ?? "";
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

/** Case-insensitive substring search over logical (unwrapped) lines. */
export function searchLines(buf: BufferLike, pattern: string, max: number) {
  const needle = pattern.toLowerCase();
  const total = contentRows(buf);
  const hits: { line: number; text: string }[] = [];
  let y = 0;
  while (y < total && hits.length < max) {
    const first = y;
    let text = rowText(buf, y);
    y++;
    while (y < total && buf.getLine(y)?.isWrapped) {
      text += buf.getLine(y)!.translateToString(true);
      y++;
    }
    if (text.toLowerCase().includes(needle)) hits.push({ line: first, text });
  }
  return hits;
}

/** Terminal modes a writer needs to know about. */
export function snapshotModes(term: TerminalLike) {
  const buf = term.buffer.active;
  return {
    bracketed_paste: term.modes.bracketedPasteMode,
    alternate_screen: buf.type === "alternate",
    application_cursor: term.modes.applicationCursorKeysMode,
    cursor: { x: buf.cursorX, y: buf.cursorY },
  };
}
