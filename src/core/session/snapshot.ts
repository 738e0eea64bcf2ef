/**
 * ptywright's ScreenSnapshot from a pane's terminal engine (runs in the pane
 * worker): size, cursor, plain text of the visible rows (vt100's
 * `contents()`: rows trimmed, a wrapped row joined to the next, trailing
 * blank rows dropped), every cell with its text, width and style, and the
 * terminal's modes and title.
 *
 * @module
 */
import type { Cell, CellStyle, ScreenSnapshot } from "./worker_api.ts";
import { type EncodedJson, RAW_HEADROOM, RAW_TAILROOM, RawBuffers } from "../../wire/raw_json.ts";

/** The part of a cell a snapshot reads (xterm's `IBufferCell`; src/core/pane/engine.ts's `EngineCell`). */
export interface BufferCell {
  getChars(): string;
  getWidth(): number;
  isFgDefault(): boolean;
  isBgDefault(): boolean;
  isFgRGB(): boolean;
  isBgRGB(): boolean;
  getFgColor(): number;
  getBgColor(): number;
  isBold(): number;
  isDim(): number;
  isItalic(): number;
  isUnderline(): number;
  isInverse(): number;
}

/** The part of a row a snapshot reads. */
export interface BufferLine {
  readonly isWrapped: boolean;
  getCell(x: number, reuse?: BufferCell): BufferCell | undefined;
  translateToString(trimRight?: boolean): string;
}

/** The part of a pane's terminal engine (src/core/pane/engine.ts) a snapshot reads. */
export interface Term {
  readonly cols: number;
  readonly rows: number;
  readonly active: {
    readonly type: string;
    readonly baseY: number;
    readonly cursorX: number;
    readonly cursorY: number;
    getLine(y: number): BufferLine | undefined;
  };
  modes(): { applicationCursor: boolean; applicationKeypad: boolean; cursorHidden: boolean };
}

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
  const mode = (isDefault: boolean, isRgb: boolean) => (isDefault ? 0 : isRgb ? 2 : 1);
  const key = `${mode(c.isFgDefault(), c.isFgRGB())}:${c.getFgColor()}:${
    mode(c.isBgDefault(), c.isBgRGB())
  }:${c.getBgColor()}:${c.isBold()}${c.isDim()}${c.isItalic()}${c.isUnderline()}${c.isInverse()}`;
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
function rowBodies(line: BufferLine | undefined, cols: number): string[] {
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

/** One visible row of a snapshot, kept for the next ones. */
interface KeptRow {
  /** xterm's packed words of the row's cells (content, fg, bg per cell): what its JSON is made of. */
  words: Uint32Array;
  hash: number;
  /** The row's cells as JSON array items (UTF-8), with row number `y`. */
  y: number;
  bytes: Uint8Array;
  /** Where each cell's row number starts in `bytes` (null: renumbering needs a rebuild). */
  at: Int32Array | null;
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
function wordsOf(line: BufferLine | undefined, cols: number): Uint32Array | null {
  if (!line) return new Uint32Array(0);
  const inner = (line as unknown as PackedLine)._line;
  const data = inner?._data;
  if (!(data instanceof Uint32Array) || typeof inner?.length !== "number") return null;
  const n = Math.min(inner.length, cols, Math.floor(data.length / 3)) * 3;
  for (let i = 0; i < n; i += 3) if (data[i] & IS_COMBINED) return null;
  return data.subarray(0, n);
}

function hashWords(w: Uint32Array): number {
  const n = w.length;
  let h = 0x811c9dc5 ^ n;
  for (let i = 0; i < n; i++) h = Math.imul(h ^ w[i], 16777619);
  return h >>> 0;
}

function sameWords(a: Uint32Array, b: Uint32Array): boolean {
  const n = a.length;
  if (n !== b.length) return false;
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

const digits = (n: number) => (n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : 4);

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Row `y`'s cells as JSON array items in UTF-8, and where each cell's row
 * number starts: right after its `{"row":`, which cannot occur inside a
 * cell's text (its quotes are escaped) or its style.
 */
function encodeRow(
  line: BufferLine | undefined,
  y: number,
  cols: number,
): { bytes: Uint8Array; at: Int32Array | null } {
  const bodies = rowBodies(line, cols);
  const json = rowJson(bodies, y);
  const bytes = encoder.encode(json);
  const at = new Int32Array(cols);
  const head = 7 + digits(y); // {"row":N
  if (bytes.length === json.length) {
    // ASCII: string offsets are byte offsets.
    for (let x = 0, p = 0; x < cols; x++) {
      at[x] = p + 7;
      p += head + bodies[x].length + 1;
    }
    return { bytes, at };
  }
  let n = 0;
  for (let i = bytes.indexOf(0x7b); i >= 0 && n < cols; i = bytes.indexOf(0x7b, i + 1)) {
    // {"row":
    if (
      bytes[i + 1] === 0x22 && bytes[i + 2] === 0x72 && bytes[i + 3] === 0x6f && bytes[i + 4] === 0x77 &&
      bytes[i + 5] === 0x22 && bytes[i + 6] === 0x3a
    ) at[n++] = i + 7;
  }
  return { bytes, at: n === cols ? at : null };
}

/**
 * The largest snapshot whose rows a session keeps (24x80 is ~370 KB; 4 MiB is
 * ~22,000 cells): a bigger screen is encoded whole each time rather than
 * held in memory twice.
 */
const KEEP_MAX_BYTES = 4 * 1024 * 1024;

/**
 * A session's recent snapshot rows, so the next snapshot encodes only the
 * rows whose cells changed: a row whose cells are unchanged, where it was or
 * elsewhere (a scroll moves every row up), is copied as bytes with its row
 * numbers rewritten in place. A prompt that prints a line changes one or two
 * rows of 24; encoding every cell again was most of a wait's answer time
 * (and its garbage).
 */
export class SnapshotRows {
  /** By hash of the words and digits of the row number (a renumbering in place keeps the length). */
  #byKey = new Map<number, KeptRow>();
  #cols = 0;

  /** The kept row to write at `y` (its bytes are for row `.y`: renumber them). */
  row(line: BufferLine | undefined, y: number, cols: number): KeptRow {
    const words = wordsOf(line, cols);
    if (!words) return { words: new Uint32Array(0), hash: -1, y, ...encodeRow(line, y, cols) };
    const hash = hashWords(words);
    const kept = cols === this.#cols ? this.#byKey.get(hash * 8 + digits(y)) : undefined;
    if (kept && sameWords(kept.words, words) && (kept.at || kept.y === y)) return kept;
    return { words: words.slice(), hash, y, ...encodeRow(line, y, cols) };
  }

  /** Keeps this snapshot's rows for the next one (not a screen too big to hold twice). */
  keep(rows: KeptRow[], cols: number, bytes: number): void {
    this.#cols = cols;
    this.#byKey = new Map();
    if (bytes > KEEP_MAX_BYTES) return;
    for (const r of rows) if (r.hash >= 0) this.#byKey.set(r.hash * 8 + digits(r.y), r);
  }
}

/** This worker's buffers for encoded snapshots (the main thread hands them back once written). */
export const rawBuffers = new RawBuffers();

/**
 * The snapshot as UTF-8 JSON, between `before` and `after` (the wait's
 * result around it), in a buffer with room for the message around that
 * ({@link EncodedJson}), built directly: a full 24x80 snapshot is ~2,000
 * cell objects, and building them then serializing (or structured-cloning
 * them to the main thread) costs several times more. With `kept` (the
 * session's {@link SnapshotRows}), rows whose cells did not change are not
 * encoded again.
 */
export function snapshotEncoded(
  term: Term,
  sequence: number,
  title: string | null,
  pixels: { width: number; height: number },
  kept: SnapshotRows = new SnapshotRows(),
  before = "",
  after = "",
): EncodedJson {
  const buf = term.active;
  const rows: KeptRow[] = [];
  let size = 0;
  for (let y = 0; y < term.rows; y++) {
    const row = kept.row(buf.getLine(buf.baseY + y), y, term.cols);
    rows.push(row);
    size += row.bytes.length + 1;
  }
  kept.keep(rows, term.cols, size);
  const { cells: _cells, ...rest } = snapshotOf(term, sequence, title, pixels, false);
  const json = JSON.stringify(rest);
  // `cells` goes where ptywright puts it: after plain_text.
  const split = json.indexOf(',"alternate_screen":');
  const pre = encoder.encode(`${before}${json.slice(0, split)},"cells":[`);
  const post = encoder.encode(`]${json.slice(split)}${after}`);
  const out = rawBuffers.take(RAW_HEADROOM + pre.length + size + post.length + RAW_TAILROOM);
  out.set(pre, RAW_HEADROOM);
  let p = RAW_HEADROOM + pre.length;
  for (let y = 0; y < rows.length; y++) {
    const row = rows[y];
    if (y) out[p++] = 0x2c; // ,
    out.set(row.bytes, p);
    if (row.y !== y) {
      const at = row.at!;
      const d = digits(y);
      for (let i = 0; i < at.length; i++) {
        let v = y;
        for (let k = at[i] + d - 1; k >= at[i]; k--) {
          out[p + k] = 0x30 + (v % 10);
          v = (v / 10) | 0;
        }
      }
    }
    p += row.bytes.length;
  }
  out.set(post, p);
  return { buf: out, end: p + post.length };
}

/** The snapshot as JSON text (see {@link snapshotEncoded}). */
export function snapshotJson(
  term: Term,
  sequence: number,
  title: string | null,
  pixels: { width: number; height: number },
  kept: SnapshotRows = new SnapshotRows(),
): string {
  const e = snapshotEncoded(term, sequence, title, pixels, kept);
  return decoder.decode(e.buf.subarray(RAW_HEADROOM, e.end));
}

/**
 * The plain text and title of a snapshot as {@link snapshotEncoded} wrote
 * it, read without parsing its cells: the keys before `cells` and after
 * them (a quote inside a cell's text is escaped, so the markers cannot
 * occur inside one).
 */
export function textsOfEncoded(json: string): { plain_text: string; title: string | null } {
  const head = json.indexOf(',"cells":[');
  const tail = json.lastIndexOf('],"alternate_screen":');
  if (head < 0 || tail < 0) {
    const snap = JSON.parse(json) as ScreenSnapshot;
    return { plain_text: snap.plain_text, title: snap.title };
  }
  const { plain_text } = JSON.parse(`${json.slice(0, head)}}`) as ScreenSnapshot;
  const { title } = JSON.parse(`{${json.slice(tail + 2)}`) as ScreenSnapshot;
  return { plain_text, title };
}

/** The visible rows as vt100's `contents()` gives them. */
export function plainText(term: Term): string {
  const buf = term.active;
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
  const buf = term.active;
  return { row: buf.cursorY, col: Math.min(buf.cursorX, term.cols - 1), visible: !term.modes().cursorHidden };
}

/** A full snapshot. */
export function snapshotOf(
  term: Term,
  sequence: number,
  title: string | null,
  pixels: { width: number; height: number },
  withCells = true,
): ScreenSnapshot {
  const buf = term.active;
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
    application_cursor: term.modes().applicationCursor,
    application_keypad: term.modes().applicationKeypad,
    title,
  };
}
