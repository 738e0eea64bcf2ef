/**
 * Jump scroll for the headless terminal: rows that a flood of plain text
 * scrolls out of xterm's buffer before anyone could see them go into the
 * compact scrollback without xterm.
 *
 * A terminal with a window skips drawing lines that scroll past faster than
 * it can show them (xterm's jump scroll); a headless one can skip more: a
 * row that leaves xterm's buffer within the same batch of output is only
 * ever read again as text in the {@link RowStore} (./scrollback.ts), so
 * xterm need not lay it out as cells first. Where a batch has a run of
 * plain text (printable ASCII, CR, LF, TAB and SGR colour sequences) longer
 * than xterm's buffer (its screen and staging rows), this module lays the
 * first part of the run out as rows itself, exactly as xterm would, stores
 * them, and lets xterm parse only the last buffer's worth, which leaves its
 * cells, cursor, colours and modes as parsing the whole batch would have.
 * The rows xterm held before the run are stored first (in order), and
 * xterm's own eviction of them later in the batch is skipped
 * ({@link Scrollback.storeAhead}).
 *
 * Anything else (another control character, escape sequence or non-ASCII
 * byte, the alternate screen, scroll margins, insert mode, a character set,
 * a hyperlink, the cursor away from the bottom row) ends or prevents a run,
 * and xterm parses that output as it comes. The equivalence is tested cell
 * for cell against xterm parsing everything (./fast_forward_test.ts).
 *
 * @module
 */
import xterm from "@xterm/headless";
import type { Scrollback } from "./scrollback.ts";
import type { LineInternals } from "./row_store.ts";

const LF = 10;
const CR = 13;
const TAB = 9;
const ESC = 27;
/** Rows a run must let us skip for the detour to pay (the state checks and the stored buffer). */
const MIN_SKIP_ROWS = 32;

/** The parts of xterm's private core read here (@xterm/headless 6.0.0). */
interface Core {
  buffers: { active: unknown; normal: BufferInternals };
  coreService: { decPrivateModes: { wraparound: boolean }; modes: { insertMode: boolean } };
  optionsService: { rawOptions: { convertEol?: boolean; screenReaderMode?: boolean } };
  _inputHandler: {
    _parser: { currentState: number };
    _utf8Decoder: { interim: Uint8Array };
    _parseStack: { paused: boolean };
    _charsetService: { charset: unknown };
    _curAttrData: { extended?: { urlId?: number } };
  };
}

interface BufferInternals {
  x: number;
  y: number;
  ybase: number;
  scrollTop: number;
  scrollBottom: number;
  nextStop(x: number): number;
  lines: {
    readonly length: number;
    readonly maxLength: number;
    get(i: number): (LineInternals & { getTrimmedLength(): number }) | undefined;
  };
}

/**
 * Positions of a run's control bytes (LF, CR, TAB, ESC), of its line feeds,
 * and where its lines with other characters than ASCII start.
 */
class Marks {
  ctl = new Int32Array(4096);
  ctls = 0;
  lf = new Int32Array(1024);
  lfs = 0;
  wide = new Int32Array(256);
  wides = 0;

  clear(): void {
    this.ctls = this.lfs = this.wides = 0;
  }

  addCtl(i: number): void {
    if (this.ctls === this.ctl.length) this.ctl = grown(this.ctl);
    this.ctl[this.ctls++] = i;
  }

  addLf(i: number): void {
    if (this.lfs === this.lf.length) this.lf = grown(this.lf);
    this.lf[this.lfs++] = i;
  }

  addWide(i: number): void {
    if (this.wides === this.wide.length) this.wide = grown(this.wide);
    this.wide[this.wides++] = i;
  }
}

function grown(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

/**
 * The length of the UTF-8 sequence at `data[i]` (a byte of 0x80 or more)
 * when it is whole and valid and encodes a printable character (not a C1
 * control, U+0080 to U+009F, which xterm would run); 0 otherwise.
 */
function utf8Length(data: Uint8Array, i: number): number {
  const b = data[i];
  const c1 = data[i + 1] ?? 0;
  if ((c1 & 0xc0) !== 0x80) return 0;
  if (b >= 0xc2 && b <= 0xdf) return b === 0xc2 && c1 < 0xa0 ? 0 : 2;
  const c2 = data[i + 2] ?? 0;
  if ((c2 & 0xc0) !== 0x80) return 0;
  if (b >= 0xe0 && b <= 0xef) {
    if (b === 0xe0 && c1 < 0xa0) return 0; // overlong
    if (b === 0xed && c1 >= 0xa0) return 0; // a surrogate
    return 3;
  }
  const c3 = data[i + 3] ?? 0;
  if ((c3 & 0xc0) !== 0x80 || b < 0xf0 || b > 0xf4) return 0;
  if ((b === 0xf0 && c1 < 0x90) || (b === 0xf4 && c1 >= 0x90)) return 0;
  return 4;
}

/**
 * Index of the first byte at or after `from` that a run cannot hold: a
 * control byte other than CR, LF and TAB, an escape sequence other than a
 * whole SGR (`ESC [ <digits ; :> m`), a byte of invalid UTF-8, a TAB in a
 * line with other characters than ASCII, or the start of such a line
 * longer than `maxWide` bytes. Notes the control bytes and those lines
 * before it in `marks` (when given). Four bytes at a time where they are
 * aligned: a word with no byte below 0x20 or above 0x7e is skipped whole.
 */
export function runEnd(data: Uint8Array, from: number, marks?: Marks, maxWide = Infinity): number {
  const n = data.length;
  const off = data.byteOffset;
  const base = (off + 3) & ~3;
  const words = new Uint32Array(data.buffer, base, Math.max(0, (off + n - base) >> 2));
  let line = from;
  let tab = false;
  let wide = false;
  let i = from;
  while (i < n) {
    const at = off + i;
    if ((at & 3) === 0 && i + 4 <= n) {
      const w = words[(at - base) >> 2];
      if (((((w - 0x20202020) & ~w) | (w + 0x01010101) | w) & 0x80808080) === 0) {
        i += 4;
        continue;
      }
    }
    const b = data[i];
    if (b >= 0x20 && b < 0x7f) {
      i++;
      continue;
    }
    if (b >= 0x80) {
      const len = utf8Length(data, i);
      if (len === 0 || tab) return i;
      if (!wide) marks?.addWide(line);
      wide = true;
      i += len;
      continue;
    }
    if (b === LF) {
      if (wide && i - line > maxWide) return line;
      marks?.addLf(i);
      line = i + 1;
      tab = wide = false;
    } else if (b === TAB) {
      if (wide) return i;
      tab = true;
    } else if (b !== CR) {
      if (b !== ESC || data[i + 1] !== 0x5b) return i;
      let j = i + 2;
      while (j < n && data[j] >= 0x30 && data[j] <= 0x3b) j++; // digits, ':' and ';'
      if (j >= n || data[j] !== 0x6d) return i;
      marks?.addCtl(i);
      i = j + 1;
      continue;
    }
    marks?.addCtl(i);
    i++;
  }
  return n;
}

/** Whether a chunk of output is mostly text a run can hold (from its first line feed on): worth holding. */
export function plainText(data: Uint8Array): boolean {
  const lf = data.indexOf(LF);
  return lf >= 0 && 2 * (runEnd(data, lf + 1) - lf) > data.length;
}

/**
 * The rows {@link FastForward} lays out itself, written into the compact
 * scrollback as xterm would lay them out: the cursor column, the row being
 * filled (read straight from the output while it is one stretch of it,
 * else copied into `row`), and the colours to hand xterm afterwards. One per
 * terminal, reused for every run.
 */
class RowWriter {
  #data: Uint8Array = new Uint8Array(0);
  #sb: Scrollback | null = null;
  #cols = 0;
  #row = new Uint8Array(0);
  /** The cursor's column. */
  x = 0;
  /** Cells written: the row's length in the store. */
  #end = 0;
  #wrapped = false;
  /** The row as it is in `data` (direct) or in `row`. */
  #direct = false;
  #dFrom = 0;
  /** Rows stored. */
  rows = 0;
  /** The SGR sequences since the last that starts with a reset (`ESC [ m`, `ESC [ 0 m`, `ESC [ 0 ; ...`). */
  #sgr: number[] = [];

  /** Starts a run of `data` at the cursor's column 0 of a fresh row. */
  start(data: Uint8Array, sb: Scrollback, cols: number): void {
    this.#data = data;
    this.#sb = sb;
    this.#cols = cols;
    if (this.#row.length !== cols) this.#row = new Uint8Array(cols).fill(32);
    this.x = 0;
    this.#end = 0;
    this.#wrapped = false;
    this.#direct = false;
    this.#dFrom = 0;
    this.rows = 0;
    this.#sgr = [];
  }

  /** Ends the run; returns the colours it leaves set, as positions in its output. */
  finish(): number[] {
    this.#data = new Uint8Array(0);
    this.#sb = null;
    return this.#sgr;
  }

  /** Notes the SGR sequence at `i`; returns where it ends. */
  colour(i: number): number {
    const data = this.#data;
    const after = data.indexOf(0x6d, i) + 1;
    const b = data[i + 2];
    if (b === 0x6d || (b === 0x30 && (data[i + 3] === 0x6d || data[i + 3] === 0x3b))) this.#sgr = [];
    this.#sgr.push(i, after);
    return after;
  }

  /** Stores the row and starts the next (`soft`: wrapped onto it). */
  newRow(soft: boolean): void {
    if (this.#direct) this.#sb!.pushRow(this.#data, this.#dFrom, this.#dFrom + this.#end, this.#wrapped);
    else {
      this.#sb!.pushRow(this.#row, 0, this.#end, this.#wrapped);
      this.#row.fill(32, 0, this.#end);
    }
    this.rows++;
    this.#direct = false;
    this.#end = 0;
    this.#wrapped = soft;
  }

  /** Prints `data[p, q)`, all printable. */
  print(p: number, q: number): void {
    const data = this.#data;
    const row = this.#row;
    const cols = this.#cols;
    while (p < q) {
      if (this.x >= cols) {
        this.newRow(true);
        this.x = 0;
      }
      const x = this.x;
      const k = Math.min(q - p, cols - x);
      if (this.#end === 0 && x === 0) {
        this.#direct = true;
        this.#dFrom = p;
      } else {
        if (this.#direct) {
          const end = this.#end;
          const dFrom = this.#dFrom;
          for (let i = 0; i < end; i++) row[i] = data[dFrom + i];
          this.#direct = false;
        }
        for (let i = 0; i < k; i++) row[x + i] = data[p + i];
      }
      this.x = x + k;
      if (this.x > this.#end) this.#end = this.x;
      p += k;
    }
  }
}

/** Where a pane's output is parsed: xterm, with the compact scrollback beside it. */
export class FastForward {
  #core: Core;
  #term: { readonly rows: number; readonly cols: number };
  #scrollback: Scrollback;
  #parse: (data: Uint8Array) => void;
  /** The row being laid out: its characters (spaces where nothing was written). */
  #rows = new RowWriter();
  #marks = new Marks();
  /** Rows stored without xterm since the start (`system.stats`, tests). */
  skipped = 0;

  private constructor(
    core: Core,
    term: { readonly rows: number; readonly cols: number },
    scrollback: Scrollback,
    parse: (data: Uint8Array) => void,
  ) {
    this.#core = core;
    this.#term = term;
    this.#scrollback = scrollback;
    this.#parse = parse;
  }

  /** For `term` (a pane's, with its compact scrollback and synchronous parse); null when xterm's internals differ. */
  static attach(
    // deno-lint-ignore no-explicit-any
    term: any,
    scrollback: Scrollback | null,
    parse: ((data: Uint8Array) => void) | null,
  ): FastForward | null {
    const core = term?._core as Core | undefined;
    const ih = core?._inputHandler;
    if (
      !scrollback || !parse || !core || !ih?._parser || !ih._utf8Decoder?.interim || !ih._parseStack ||
      !ih._charsetService || !ih._curAttrData || !core.coreService?.decPrivateModes ||
      typeof core.buffers?.normal?.nextStop !== "function"
    ) {
      return null;
    }
    return new FastForward(core, term, scrollback, parse);
  }

  /** Parses `data` as the synchronous parse would, laying out the rows a long run scrolls away itself. */
  parse(data: Uint8Array): void {
    const need = this.#core.buffers.normal.lines.maxLength;
    let parsed = 0;
    let pos = 0;
    while (pos < data.length) {
      const lf = data.indexOf(LF, pos);
      if (lf < 0) break;
      const start = lf + 1;
      const marks = this.#marks;
      marks.clear();
      const end = runEnd(data, start, marks, (SCRATCH_ROWS - 2) * (this.#term.cols - 1));
      // The run's last `need` line feeds are xterm's: they evict every row it held before.
      let j = marks.lfs - need - 1;
      while (j >= 0 && data[marks.lf[j] - 1] !== CR) j--;
      if (j + 1 >= MIN_SKIP_ROWS) {
        this.#parse(data.subarray(parsed, start));
        parsed = start;
        // A screen not full yet (a new pane, a clear): xterm parses a screenful more, then again.
        const rows = this.#term.rows;
        if (!this.#ready() && this.#core.buffers.normal.y < rows - 1 && j + 1 - rows >= MIN_SKIP_ROWS) {
          const at = marks.lf[rows - 1] + 1;
          this.#parse(data.subarray(parsed, at));
          parsed = at;
        }
        if (this.#ready()) {
          const cut = marks.lf[j] + 1;
          this.#layOut(data, parsed, cut);
          parsed = cut;
        }
      }
      pos = end + 1;
    }
    if (parsed < data.length) this.#parse(parsed === 0 ? data : data.subarray(parsed));
  }

  /**
   * Whether xterm is where a run can start: the normal screen without
   * margins, the cursor at the start of an empty bottom row, the parser
   * between sequences, and nothing that changes how text is printed.
   */
  #ready(): boolean {
    const core = this.#core;
    const buf = core.buffers.normal;
    const ih = core._inputHandler;
    const rows = this.#term.rows;
    const opts = core.optionsService.rawOptions;
    if (core.buffers.active !== buf || buf.x !== 0 || buf.y !== rows - 1) return false;
    if (buf.scrollTop !== 0 || buf.scrollBottom !== rows - 1 || buf.ybase + rows !== buf.lines.length) {
      return false;
    }
    if (ih._parser.currentState !== 0 || ih._utf8Decoder.interim[0] !== 0 || ih._parseStack.paused) {
      return false;
    }
    if (!core.coreService.decPrivateModes.wraparound || core.coreService.modes.insertMode) return false;
    if (
      ih._charsetService.charset || ih._curAttrData.extended?.urlId || opts.convertEol ||
      opts.screenReaderMode
    ) {
      return false;
    }
    const row = buf.lines.get(buf.lines.length - 1);
    return !!row && !row.isWrapped && row.getTrimmedLength() === 0 && this.#scrollback.skipping === 0;
  }

  /**
   * Stores xterm's rows above the cursor, then lays out `data[from, to)`
   * (the start of the run {@link runEnd} marked, ending in CR LF) row by row
   * into the store, as xterm would print it from the start of the empty
   * bottom row, and hands xterm its colour changes (SGR) so the text after
   * it is drawn in the same colours. A row of text that is not written over
   * goes from `data` into the store as it is.
   */
  #layOut(data: Uint8Array, from: number, to: number): void {
    const cols = this.#term.cols;
    const buf = this.#core.buffers.normal;
    const { ctl, ctls, wide, wides } = this.#marks;
    this.#scrollback.storeAhead(buf.lines.length - 1);
    const out = this.#rows;
    out.start(data, this.#scrollback, cols);
    let p = from;
    let w = 0;
    while (w < wides && wide[w] < from) w++;
    let c = 0;
    while (c < ctls && ctl[c] < from) c++;
    for (; c < ctls; c++) {
      if (w < wides && wide[w] === p && p < to) {
        // A line with other characters than ASCII: xterm lays it out, on a terminal of its own.
        w++;
        while (data[ctl[c]] !== LF) {
          const i = ctl[c++];
          if (data[i] === ESC) out.colour(i);
        }
        const lf = ctl[c];
        out.rows += this.#wideLine(data, p, lf, out.x);
        out.x = Math.min(scratchOf(cols).core.buffers.normal.x, cols - 1);
        p = lf + 1;
        continue;
      }
      const i = ctl[c];
      if (i >= to) break;
      if (i > p) out.print(p, i);
      p = i + 1;
      const b = data[i];
      if (b === LF) {
        out.newRow(false);
        if (out.x >= cols) out.x = cols - 1;
      } else if (b === CR) {
        out.x = 0;
      } else if (b === TAB) {
        if (out.x < cols) out.x = buf.nextStop(out.x);
      } else { // an SGR sequence (runEnd checked it)
        p = out.colour(i);
      }
    }
    this.skipped += out.rows;
    const sgr = out.finish();
    if (sgr.length) this.#parse(sgrBytes(data, sgr));
  }

  /**
   * Lays out the line `data[from, to)` (up to its LF, printed from column
   * `x` of an empty row) on the worker's scratch terminal and stores its
   * rows; returns how many.
   */
  #wideLine(data: Uint8Array, from: number, to: number, x: number): number {
    const scratch = scratchOf(this.#term.cols);
    scratch.parse(x > 0 ? enc.encode(`${CLEAR}\x1b[${x + 1}G`) : CLEAR_BYTES);
    scratch.parse(data.subarray(from, to));
    const buf = scratch.core.buffers.normal;
    for (let y = 0; y <= buf.y; y++) this.#scrollback.pushLine(buf.lines.get(y)!);
    return buf.y + 1;
  }
}

/** The sequences `data[sgr[0], sgr[1])`, `data[sgr[2], sgr[3])`, ... in one buffer. */
function sgrBytes(data: Uint8Array, sgr: number[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let k = 0; k < sgr.length; k += 2) parts.push(data.subarray(sgr[k], sgr[k + 1]));
  return joined(parts);
}

/** `parts` in one buffer (the one part itself when there is one). */
function joined(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const enc = new TextEncoder();
/** Home, erase the screen (and every row's wrap), default colours. */
const CLEAR = "\x1b[H\x1b[2J\x1b[0m";
const CLEAR_BYTES = enc.encode(CLEAR);
/** Rows of the scratch terminal: a line of other characters than ASCII is held to fewer (`runEnd`'s `maxWide`). */
const SCRATCH_ROWS = 8;

interface Scratch {
  core: Core;
  parse(data: Uint8Array): void;
}
/** The worker's scratch terminals by width (one for all its panes of that width). */
const scratches = new Map<number, Scratch>();

function scratchOf(cols: number): Scratch {
  let s = scratches.get(cols);
  if (!s) {
    const term = new xterm.Terminal({
      cols,
      rows: SCRATCH_ROWS,
      scrollback: 0,
      allowProposedApi: true,
      logLevel: "off",
    });
    // deno-lint-ignore no-explicit-any
    const core = (term as any)._core;
    s = { core, parse: (d) => core._writeBuffer.writeSync(d) };
    scratches.set(cols, s);
  }
  return s;
}

/** A flood's output read from its PTY and held to be parsed in one batch. */
export class Held {
  #chunks: Uint8Array[] = [];
  bytes = 0;
  /** Chunks read (each one an output generation once parsed). */
  get count(): number {
    return this.#chunks.length;
  }
  /** The deadline by which it is parsed. */
  timer: ReturnType<typeof setTimeout> | null = null;

  add(data: Uint8Array): void {
    this.#chunks.push(data);
    this.bytes += data.length;
  }

  /** Everything held, in one buffer; holds nothing after. */
  take(): Uint8Array {
    const out = joined(this.#chunks);
    this.drop();
    return out;
  }

  drop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.#chunks = [];
    this.bytes = 0;
  }
}
