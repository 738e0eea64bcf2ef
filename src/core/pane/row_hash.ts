/**
 * The row hash `read --since` compares (./screen.ts's snapshots), from a
 * row's text, from the compact scrollback's bytes (./scrollback.ts) or from
 * xterm's cells, all giving the same number for the same text, so no
 * string need be made per row.
 *
 * @module
 */

/** The parts of xterm's internal `BufferLine` read here (the pinned @xterm/headless 6.0.0). */
export interface CellsLike {
  _data?: Uint32Array;
  _combined?: Record<number, string>;
}

const CONTENT = 0x3fffff;
const CODEPOINT = 0x1fffff;
const COMBINED = 0x200000;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * The hash a row's reads compare (`read --since`): FNV-1a over the UTF-16
 * code units of `text` without its trailing spaces. The compact
 * scrollback's `RowStore.hash` and {@link lineHash} give the same number
 * from bytes and cells.
 */
export function textHash(text: string): number {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 32) end--;
  let h = FNV_OFFSET;
  for (let i = 0; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

/** {@link textHash} of the code units `units[from..to)`. */
export function unitsHash(units: Uint8Array | Uint16Array, from: number, to: number): number {
  while (to > from && units[to - 1] === 32) to--;
  let h = FNV_OFFSET;
  for (let i = from; i < to; i++) h = Math.imul(h ^ units[i], FNV_PRIME);
  return h >>> 0;
}

/**
 * {@link textHash} of xterm's row `line` as `lineText` reads it, from its
 * cells; null when the row is not as expected (then hash its text).
 */
export function lineHash(line: CellsLike): number | null {
  const data = line._data;
  if (!(data instanceof Uint32Array)) return null;
  // The last cell that is neither unwritten nor a space (unwritten ones four at a time first).
  let last = data.length - 3;
  while (last >= 9 && ((data[last] | data[last - 3] | data[last - 6] | data[last - 9]) & CONTENT) === 0) {
    last -= 12;
  }
  while (last >= 0) {
    const c = data[last] & CONTENT;
    if (c !== 0 && c !== 32) break;
    last -= 3;
  }
  let h = FNV_OFFSET;
  for (let i = 0; i <= last;) {
    const word = data[i];
    const cp = word & CODEPOINT;
    if (word & COMBINED) {
      const s = line._combined?.[i / 3] ?? "";
      for (let k = 0; k < s.length; k++) h = Math.imul(h ^ s.charCodeAt(k), FNV_PRIME);
    } else if (cp > 0xffff) {
      h = Math.imul(h ^ (0xd800 + ((cp - 0x10000) >> 10)), FNV_PRIME);
      h = Math.imul(h ^ (0xdc00 + ((cp - 0x10000) & 0x3ff)), FNV_PRIME);
    } else {
      h = Math.imul(h ^ (cp || 32), FNV_PRIME);
    }
    i += ((word >> 22) || 1) * 3;
  }
  return h >>> 0;
}
