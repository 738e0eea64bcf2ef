/**
 * ptywright's ScreenSnapshot from a headless xterm (runs in the pane
 * worker): size, cursor, plain text of the visible rows (vt100's
 * `contents()`: rows trimmed, a wrapped row joined to the next, trailing
 * blank rows dropped), every cell with its text, width and style, and the
 * terminal's modes and title.
 *
 * @module
 */
import type xterm from "@xterm/headless";
import type { Cell, CellStyle, ScreenSnapshot } from "./_protocol.ts";

type Term = xterm.Terminal;
type BufferCell = xterm.IBufferCell;

const DEFAULT_STYLE: CellStyle = Object.freeze({
  foreground: "default",
  background: "default",
  bold: false,
  dim: false,
  italic: false,
  underline: false,
  inverse: false,
}) as CellStyle;

function colour(isDefault: boolean, isRgb: boolean, value: number): string {
  if (isDefault) return "default";
  if (isRgb) return `rgb:${(value >> 16) & 255}:${(value >> 8) & 255}:${value & 255}`;
  return `idx:${value}`;
}

function styleOf(c: BufferCell): CellStyle {
  const plain = c.isFgDefault() && c.isBgDefault() && !c.isBold() && !c.isDim() && !c.isItalic() &&
    !c.isUnderline() && !c.isInverse();
  if (plain) return DEFAULT_STYLE;
  return {
    foreground: colour(c.isFgDefault(), c.isFgRGB(), c.getFgColor()),
    background: colour(c.isBgDefault(), c.isBgRGB(), c.getBgColor()),
    bold: c.isBold() !== 0,
    dim: c.isDim() !== 0,
    italic: c.isItalic() !== 0,
    underline: c.isUnderline() !== 0,
    inverse: c.isInverse() !== 0,
  };
}

const styleJson = new Map<number, Map<number, string>>();
const styleJsonSlow = new Map<string, string>();

/**
 * A cell's style as JSON, cached per distinct style: keyed by xterm's packed
 * attribute words (`fg`, `bg`: colour, mode and flags) where the cell has
 * them, else by the values read through the public API.
 */
function styleJsonOf(c: BufferCell): string {
  const packed = c as unknown as { fg?: number; bg?: number };
  if (typeof packed.fg === "number" && typeof packed.bg === "number") {
    let row = styleJson.get(packed.fg);
    if (!row) styleJson.set(packed.fg, row = new Map());
    let json = row.get(packed.bg);
    if (json === undefined) {
      json = JSON.stringify(styleOf(c));
      if (row.size < 1024) row.set(packed.bg, json);
    }
    return json;
  }
  const key =
    `${c.getFgColorMode()}:${c.getFgColor()}:${c.getBgColorMode()}:${c.getBgColor()}:${c.isBold()}${c.isDim()}${c.isItalic()}${c.isUnderline()}${c.isInverse()}`;
  let json = styleJsonSlow.get(key);
  if (json === undefined) {
    json = JSON.stringify(styleOf(c));
    if (styleJsonSlow.size < 4096) styleJsonSlow.set(key, json);
  }
  return json;
}

const DEFAULT_STYLE_JSON = JSON.stringify(DEFAULT_STYLE);
/** A cell's text that needs no JSON escaping (no quote, backslash or control character). */
function plain(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** A default (never written) cell's JSON after its `{"row":N`. */
function blankBody(x: number): string {
  return `,"col":${x},"text":"","wide":false,"wide_continuation":false,"style":${DEFAULT_STYLE_JSON}}`;
}

/** The JSON of row `y`'s cells, each after its `{"row":N` (which depends on where the row is). */
function rowBodies(line: xterm.IBufferLine | undefined, cols: number): string[] {
  const bodies: string[] = new Array(cols);
  let cell: BufferCell | undefined;
  for (let x = 0; x < cols; x++) {
    cell = line?.getCell(x, cell);
    if (!cell) {
      bodies[x] = blankBody(x);
      continue;
    }
    const chars = cell.getChars();
    const width = cell.getWidth();
    bodies[x] = `,"col":${x},"text":${plain(chars) ? `"${chars}"` : JSON.stringify(chars)},"wide":${
      width === 2
    },"wide_continuation":${width === 0},"style":${styleJsonOf(cell)}}`;
  }
  return bodies;
}

/** A row's cells as JSON at row `y`. */
function rowJson(bodies: string[], y: number): string {
  const head = `{"row":${y}`;
  return head + bodies.join(`,${head}`);
}

/** One visible row of a snapshot, kept for the next one. */
interface KeptRow {
  /** xterm's packed words of the row's cells (content, fg, bg per cell): what its JSON is made of. */
  words: Uint32Array;
  hash: number;
  /** The row's cells as JSON items at row `y`. */
  y: number;
  json: string;
}

/** What xterm 6 keeps per line (internal; absent in another version, then nothing is reused). */
interface PackedLine {
  _line?: { _data?: Uint32Array; length?: number };
}

/** Content word bit: the cell's text is a grapheme cluster kept outside the words. */
const IS_COMBINED = 0x200000;

/**
 * The words the row's first `cols` cells are made of, or null when the row
 * cannot be reused (a combined cell's text lives outside them, or this
 * xterm keeps its lines differently).
 */
function wordsOf(line: xterm.IBufferLine | undefined, cols: number): Uint32Array | null {
  if (!line) return new Uint32Array(0);
  const inner = (line as unknown as PackedLine)._line;
  const data = inner?._data;
  if (!(data instanceof Uint32Array) || typeof inner?.length !== "number") return null;
  const n = Math.min(inner.length, cols, Math.floor(data.length / 3)) * 3;
  for (let i = 0; i < n; i += 3) if (data[i] & IS_COMBINED) return null;
  return data.subarray(0, n);
}

function hashWords(w: Uint32Array): number {
  let h = 0x811c9dc5 ^ w.length;
  for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w[i], 16777619);
  return h >>> 0;
}

function sameWords(a: Uint32Array, b: Uint32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * A session's last snapshot, row by row, so the next one re-encodes only
 * the rows whose cells changed: a row that stayed put is reused as is, one
 * that moved (a scroll) gets its cells' JSON under its new row number. A
 * prompt that prints a line changes one or two rows of 24; building every
 * cell again was most of a wait's answer time (and its garbage).
 */
export class SnapshotRows {
  #rows: (KeptRow | null)[] = [];
  #byHash = new Map<number, KeptRow>();
  #cols = 0;

  /** Row `y`'s cells as JSON (after `{"row":` … of the first cell, as a JSON array's items). */
  row(line: xterm.IBufferLine | undefined, y: number, cols: number, next: (KeptRow | null)[]): string {
    const words = wordsOf(line, cols);
    if (!words) {
      next.push(null);
      return rowJson(rowBodies(line, cols), y);
    }
    const hash = hashWords(words);
    let kept: KeptRow | null | undefined = cols === this.#cols ? this.#rows[y] : null;
    if (kept && kept.hash === hash && sameWords(kept.words, words)) {
      next.push(kept);
      return kept.json;
    }
    kept = cols === this.#cols ? this.#byHash.get(hash) : undefined;
    let row: KeptRow;
    if (kept && sameWords(kept.words, words)) {
      // The same cells elsewhere: only the row numbers change. `{"row":N,"col":`
      // cannot occur inside a cell's text (its quotes are escaped).
      row = {
        words: kept.words,
        hash,
        y,
        json: kept.json.replaceAll(`{"row":${kept.y},"col":`, `{"row":${y},"col":`),
      };
    } else {
      row = { words: words.slice(), hash, y, json: rowJson(rowBodies(line, cols), y) };
    }
    next.push(row);
    return row.json;
  }

  /** Keeps this snapshot's rows for the next one. */
  keep(rows: (KeptRow | null)[], cols: number): void {
    this.#rows = rows;
    this.#cols = cols;
    this.#byHash = new Map();
    for (const r of rows) if (r) this.#byHash.set(r.hash, r);
  }
}

/**
 * The snapshot as JSON text, built directly: a full 24x80 snapshot is ~2,000
 * cell objects, and building them then serializing (or structured-cloning
 * them to the main thread) costs several times more than this. With `kept`
 * (the session's {@link SnapshotRows}), rows whose cells did not change since
 * the last snapshot are not encoded again.
 */
export function snapshotJson(
  term: Term,
  sequence: number,
  title: string | null,
  pixels: { width: number; height: number },
  kept: SnapshotRows = new SnapshotRows(),
): string {
  const buf = term.buffer.active;
  const rows: string[] = [];
  const next: (KeptRow | null)[] = [];
  for (let y = 0; y < term.rows; y++) {
    rows.push(kept.row(buf.getLine(buf.baseY + y), y, term.cols, next));
  }
  kept.keep(next, term.cols);
  const head = snapshotOf(term, sequence, title, pixels, false);
  const { cells: _cells, ...rest } = head;
  const json = JSON.stringify(rest);
  // `cells` goes where ptywright puts it: after plain_text.
  const at = json.indexOf(',"alternate_screen":');
  return `${json.slice(0, at)},"cells":[${rows.join(",")}]${json.slice(at)}`;
}

/** The visible rows as vt100's `contents()` gives them. */
export function plainText(term: Term): string {
  const buf = term.buffer.active;
  let out = "";
  for (let y = 0; y < term.rows; y++) {
    const line = buf.getLine(buf.baseY + y);
    const wraps = buf.getLine(buf.baseY + y + 1)?.isWrapped === true && y + 1 < term.rows;
    const text = line?.translateToString(!wraps) ?? "";
    out += wraps ? text : text.replace(/ +$/, "") + "\n";
  }
  return out.replace(/\n+$/, "");
}

/** Cursor position in the visible rows and whether it is shown (DECTCEM). */
export function cursorOf(term: Term): { row: number; col: number; visible: boolean } {
  const buf = term.buffer.active;
  // deno-lint-ignore no-explicit-any
  const hidden = (term as any)._core?.coreService?.isCursorHidden === true;
  return { row: buf.cursorY, col: Math.min(buf.cursorX, term.cols - 1), visible: !hidden };
}

/** A full snapshot. */
export function snapshotOf(
  term: Term,
  sequence: number,
  title: string | null,
  pixels: { width: number; height: number },
  withCells = true,
): ScreenSnapshot {
  const buf = term.buffer.active;
  const cells: Cell[] = [];
  if (withCells) {
    let cell: BufferCell | undefined;
    for (let y = 0; y < term.rows; y++) {
      const line = buf.getLine(buf.baseY + y);
      for (let x = 0; x < term.cols; x++) {
        cell = line?.getCell(x, cell);
        if (!cell) {
          cells.push({
            row: y,
            col: x,
            text: "",
            wide: false,
            wide_continuation: false,
            style: DEFAULT_STYLE,
          });
          continue;
        }
        const width = cell.getWidth();
        cells.push({
          row: y,
          col: x,
          text: cell.getChars(),
          wide: width === 2,
          wide_continuation: width === 0,
          style: styleOf(cell),
        });
      }
    }
  }
  return {
    size: { rows: term.rows, cols: term.cols, pixel_width: pixels.width, pixel_height: pixels.height },
    cursor: cursorOf(term),
    sequence,
    plain_text: plainText(term),
    cells,
    alternate_screen: buf.type === "alternate",
    application_cursor: term.modes.applicationCursorKeysMode,
    application_keypad: term.modes.applicationKeypadMode,
    title,
  };
}
