/**
 * The Ghostty engine: Ghostty's VT core compiled to WebAssembly (npm
 * `ghostty-web`, https://github.com/coder/ghostty-web), behind the engine
 * interface (./engine.ts). Output is parsed in compiled code; reads adapt
 * its cells to the interface's xterm-shaped ones.
 *
 * The WebAssembly is the package's own copy inlined in its module (a
 * `data:` URL), so `deno compile` carries it and nothing is read from disk.
 * It is compiled once per worker ({@link prepareGhostty}) and instantiated
 * once per pane.
 *
 * What `ghostty-web` 0.4.0 does not expose, and how this engine stands in
 * (docs/engines.md lists the consequences):
 * - colours come as RGB: the default colours and the 16 base colours are
 *   configured to marker values and mapped back, the 240 others through
 *   xterm's table;
 * - the window title: OSC 0 and 2 are picked out of the output here;
 * - whether a scrollback row wraps on: guessed (a row filled to its last
 *   column continues on the next);
 * - rows dropped off the top of the history, and the normal screen while
 *   the alternate one is active, are not readable.
 *
 * @module
 */
import type { Ghostty, GhosttyTerminal } from "ghostty-web";
import type { EngineBuffer, EngineCell, EngineLine, EngineModes, EngineSize, PaneEngine } from "./engine.ts";
import type { BufferLike } from "./screen.ts";
import { serializeCells } from "./serialize_cells.ts";

/** Ghostty's WebAssembly, compiled (once per worker), and ghostty-web's wrapper class. */
let wasmModule: WebAssembly.Module | null = null;
let GhosttyClass: typeof Ghostty | null = null;
let loading: Promise<void> | null = null;

/** Compiles Ghostty's WebAssembly for this worker (once; later calls share it). */
export function prepareGhostty(): Promise<void> | null {
  if (wasmModule) return null;
  loading ??= (async () => {
    // Loaded when a worker's first Ghostty pane starts (its module is ~0.7 MB of script, the
    // WebAssembly inlined): a host that runs only xterm panes never parses it.
    const { Ghostty } = await import("ghostty-web");
    GhosttyClass = Ghostty;
    const instantiate = WebAssembly.instantiate;
    // ghostty-web compiles its inlined copy and instantiates it: the module is kept, for an
    // instance per pane (below).
    const keep = ((m: WebAssembly.Module, imports?: WebAssembly.Imports) => {
      wasmModule = m;
      return instantiate(m, imports);
    }) as typeof WebAssembly.instantiate;
    WebAssembly.instantiate = keep;
    try {
      await Ghostty.load();
    } finally {
      WebAssembly.instantiate = instantiate;
    }
    if (!wasmModule) throw new Error("Ghostty's WebAssembly did not load");
  })();
  return loading;
}

/**
 * Ghostty for one pane: an instance of its own, so a pane's memory goes
 * with it (ghostty-web 0.4.0 corrupts an instance's heap when a terminal
 * that held grapheme clusters is freed and another then prints some, see
 * docs/engines.md) and a fault stays in its pane. Its only import is
 * `env.log`, which prints every parser warning (Claude Code's OSC 7501
 * alone is one per redraw): dropped.
 */
function ghosttyInstance(): Ghostty {
  if (!wasmModule || !GhosttyClass) throw new Error("Ghostty's engine is not loaded (prepareGhostty)");
  return new GhosttyClass(new WebAssembly.Instance(wasmModule, { env: { log: () => {} } }));
}

/** The default colours and 16 base colours as configured: markers no program is likely to set. */
const DEFAULT_FG = 0x7b0e5d;
const DEFAULT_BG = 0x5d0e7b;
const BASE = 0x0e7b00;
const PALETTE = Array.from({ length: 16 }, (_, i) => BASE + i);

/** xterm's 256-colour table from index 16: the 6x6x6 cube, then 24 greys. */
const BY_RGB = (() => {
  const m = new Map<number, number>();
  const steps = [0, 95, 135, 175, 215, 255];
  for (let i = 16; i < 232; i++) {
    const n = i - 16;
    m.set((steps[Math.floor(n / 36)] << 16) | (steps[Math.floor(n / 6) % 6] << 8) | steps[n % 6], i);
  }
  for (let i = 232; i < 256; i++) {
    const v = 8 + 10 * (i - 232);
    m.set((v << 16) | (v << 8) | v, i);
  }
  return m;
})();

/** A colour as the interface gives it: -1 default, 0..255 a palette index, else 0x1000000 | RGB. */
function colourOf(r: number, g: number, b: number, byDefault: number): number {
  const rgb = (r << 16) | (g << 8) | b;
  if (rgb === byDefault) return -1;
  if (rgb - BASE >= 0 && rgb - BASE < 16) return rgb - BASE;
  return BY_RGB.get(rgb) ?? (0x1000000 | rgb);
}

/** Ghostty's cell flags. */
const BOLD = 1, ITALIC = 2, UNDERLINE = 4, STRIKE = 8, INVERSE = 16, INVISIBLE = 32, BLINK = 64, FAINT = 128;
/** Bytes per cell as the WebAssembly writes them: codepoint (u32), fg RGB, bg RGB, flags, width, link (u16), grapheme length. */
const CELL = 16;

/**
 * One cell, adapted (its colour fields are not named `fg`/`bg`: those are
 * xterm's packed words, which src/core/session/snapshot.ts keys its style cache by).
 */
class Cell implements EngineCell {
  chars = "";
  width = 1;
  fgColour = -1;
  bgColour = -1;
  flags = 0;

  getChars(): string {
    return this.chars;
  }
  getWidth(): number {
    return this.width;
  }
  isFgDefault(): boolean {
    return this.fgColour === -1;
  }
  isBgDefault(): boolean {
    return this.bgColour === -1;
  }
  isFgRGB(): boolean {
    return this.fgColour > 255;
  }
  isBgRGB(): boolean {
    return this.bgColour > 255;
  }
  isFgPalette(): boolean {
    return this.fgColour >= 0 && this.fgColour <= 255;
  }
  isBgPalette(): boolean {
    return this.bgColour >= 0 && this.bgColour <= 255;
  }
  getFgColor(): number {
    return this.fgColour < 0 ? 0 : this.fgColour & 0xffffff;
  }
  getBgColor(): number {
    return this.bgColour < 0 ? 0 : this.bgColour & 0xffffff;
  }
  isBold(): number {
    return this.flags & BOLD;
  }
  isDim(): number {
    return this.flags & FAINT;
  }
  isItalic(): number {
    return this.flags & ITALIC;
  }
  isUnderline(): number {
    return this.flags & UNDERLINE;
  }
  isInverse(): number {
    return this.flags & INVERSE;
  }
  isBlink(): number {
    return this.flags & BLINK;
  }
  isInvisible(): number {
    return this.flags & INVISIBLE;
  }
  isStrikethrough(): number {
    return this.flags & STRIKE;
  }
}

/** One row: a copy of its cells' bytes, and the text of the cells holding a grapheme cluster. */
class Line implements EngineLine {
  readonly #raw: Uint8Array;
  readonly #dv: DataView;
  readonly #clusters: Map<number, string> | null;
  readonly isWrapped: boolean;
  readonly length: number;

  constructor(raw: Uint8Array, clusters: Map<number, string> | null, wrapped: boolean) {
    this.#raw = raw;
    this.#dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    this.#clusters = clusters;
    this.isWrapped = wrapped;
    this.length = raw.length / CELL;
  }

  #code(x: number): number {
    return this.#dv.getUint32(x * CELL, true);
  }
  /**
   * As xterm's: 0 only for the cell after a wide character; the last cell
   * of a row left empty because a wide character did not fit (Ghostty's
   * "spacer head", width 0) is an empty cell of width 1.
   */
  #width(x: number): number {
    const w = this.#raw[x * CELL + 11];
    if (w !== 0 || x !== this.length - 1) return w;
    return x > 0 && this.#raw[(x - 1) * CELL + 11] === 2 ? 0 : 1;
  }
  #chars(x: number): string {
    const cp = this.#code(x);
    if (cp === 0) return "";
    return this.#clusters?.get(x) ?? String.fromCodePoint(cp);
  }

  getCell(x: number, reuse?: EngineCell): EngineCell | undefined {
    if (x < 0 || x >= this.length) return undefined;
    const c = reuse instanceof Cell ? reuse : new Cell();
    const r = this.#raw, o = x * CELL;
    c.chars = this.#chars(x);
    c.width = this.#width(x);
    c.fgColour = colourOf(r[o + 4], r[o + 5], r[o + 6], DEFAULT_FG);
    c.bgColour = colourOf(r[o + 7], r[o + 8], r[o + 9], DEFAULT_BG);
    c.flags = r[o + 10];
    return c;
  }

  /** As xterm's: a cell never written is a space, the cell after a wide character nothing. */
  translateToString(trimRight = false, start = 0, end = this.length): string {
    if (trimRight) {
      let n = this.length;
      while (n > 0 && this.#code(n - 1) === 0 && this.#width(n - 1) !== 0) n--;
      end = Math.min(end, n);
    }
    if (!this.#clusters) {
      const codes: number[] = [];
      for (let x = start; x < end; x++) {
        if (this.#width(x) !== 0) codes.push(this.#code(x) || 0x20);
      }
      return String.fromCodePoint(...codes);
    }
    let s = "";
    for (let x = start; x < end; x++) {
      if (this.#width(x) === 0) continue;
      s += this.#chars(x) || " ";
    }
    return s;
  }

  /** Whether the row is filled to its last column (a history row's wrap is guessed from it). */
  get full(): boolean {
    const x = this.length - 1;
    return x >= 0 && (this.#code(x) !== 0 || this.#width(x) === 0);
  }
}

/** What ghostty-web's terminal keeps of its WebAssembly (public in its JavaScript, private in its types). */
interface Wasm {
  exports: {
    memory: WebAssembly.Memory;
    ghostty_wasm_alloc_u8_array(len: number): number;
    ghostty_wasm_free_u8_array(ptr: number, len: number): void;
    ghostty_terminal_write(h: number, ptr: number, len: number): void;
    ghostty_terminal_get_scrollback_line(h: number, offset: number, ptr: number, cols: number): number;
    ghostty_render_state_update(h: number): number;
    ghostty_render_state_get_viewport(h: number, ptr: number, cells: number): number;
  };
  handle: number;
}

/** The active screen with Ghostty's scrollback above it, read once per output generation. */
class View implements EngineBuffer {
  readonly type: "normal" | "alternate";
  readonly length: number;
  readonly baseY: number;
  readonly cursorX: number;
  readonly cursorY: number;
  #t: GhosttyTerminal;
  #io: Io;
  #screen: Line[] | null = null;
  #history = new Map<number, Line>();

  /** History rows Ghostty keeps beyond the pane's scrollback (it drops whole pages): not shown. */
  #skip: number;

  constructor(t: GhosttyTerminal, io: Io, history: number) {
    this.#t = t;
    this.#io = io;
    const alternate = t.isAlternateScreen();
    this.type = alternate ? "alternate" : "normal";
    const kept = alternate ? 0 : t.getScrollbackLength();
    this.#skip = Math.max(0, kept - history);
    this.baseY = kept - this.#skip;
    this.length = this.baseY + t.rows;
    const cursor = t.getCursor();
    this.cursorX = cursor.x;
    this.cursorY = cursor.y;
  }

  getLine(y: number): EngineLine | undefined {
    if (y < 0 || y >= this.length) return undefined;
    if (y >= this.baseY) return (this.#screen ??= this.#readScreen())[y - this.baseY];
    return this.#historyLine(y);
  }

  #historyLine(y: number): Line {
    let line = this.#history.get(y);
    if (!line) {
      const cols = this.#t.cols;
      const at = y + this.#skip;
      const raw = this.#io.scrollbackLine(at, cols);
      const wrapped = at > 0 && (this.#history.get(y - 1) ?? this.#bare(at - 1, cols)).full;
      line = new Line(raw, this.#clusters(raw, (x) => this.#t.getScrollbackGraphemeString(at, x)), wrapped);
      this.#history.set(y, line);
    }
    return line;
  }

  #bare(y: number, cols: number): Line {
    return new Line(this.#io.scrollbackLine(y, cols), null, false);
  }

  #readScreen(): Line[] {
    const t = this.#t;
    const all = this.#io.viewport(t.cols, t.rows);
    const lines: Line[] = [];
    const bytes = t.cols * CELL;
    for (let r = 0; r < t.rows; r++) {
      const raw = all.subarray(r * bytes, (r + 1) * bytes);
      lines.push(new Line(raw, this.#clusters(raw, (x) => t.getGraphemeString(r, x)), t.isRowWrapped(r)));
    }
    return lines;
  }

  /** The text of the cells that hold more than one code point. */
  #clusters(raw: Uint8Array, grapheme: (x: number) => string): Map<number, string> | null {
    let out: Map<number, string> | null = null;
    for (let o = 14, x = 0; o < raw.length; o += CELL, x++) {
      if (raw[o] > 0) (out ??= new Map()).set(x, grapheme(x));
    }
    return out;
  }
}

/** Reads and writes through the WebAssembly's exports, with buffers kept across calls. */
class Io {
  #w: Wasm;
  #ptr = 0;
  #cap = 0;

  constructor(w: Wasm) {
    this.#w = w;
  }

  #room(bytes: number): number {
    if (this.#cap < bytes) {
      if (this.#ptr) this.#w.exports.ghostty_wasm_free_u8_array(this.#ptr, this.#cap);
      this.#cap = Math.max(bytes, 64 * 1024);
      this.#ptr = this.#w.exports.ghostty_wasm_alloc_u8_array(this.#cap);
    }
    return this.#ptr;
  }

  /** Parses `data` (copied into the WebAssembly's memory once). */
  write(data: Uint8Array): void {
    const ptr = this.#room(data.length);
    const ex = this.#w.exports;
    new Uint8Array(ex.memory.buffer, ptr, data.length).set(data);
    ex.ghostty_terminal_write(this.#w.handle, ptr, data.length);
  }

  /** History row `y`'s cells (a copy). */
  scrollbackLine(y: number, cols: number): Uint8Array {
    const ptr = this.#room(cols * CELL);
    const ex = this.#w.exports;
    const n = ex.ghostty_terminal_get_scrollback_line(this.#w.handle, y, ptr, cols);
    return n < 0 ? new Uint8Array(0) : new Uint8Array(ex.memory.buffer, ptr, n * CELL).slice();
  }

  /** The screen's cells, row after row (a copy). */
  viewport(cols: number, rows: number): Uint8Array {
    const ptr = this.#room(cols * rows * CELL);
    const ex = this.#w.exports;
    ex.ghostty_render_state_update(this.#w.handle);
    const n = ex.ghostty_render_state_get_viewport(this.#w.handle, ptr, cols * rows);
    return n < 0
      ? new Uint8Array(cols * rows * CELL)
      : new Uint8Array(ex.memory.buffer, ptr, cols * rows * CELL).slice();
  }

  free(): void {
    if (this.#ptr) this.#w.exports.ghostty_wasm_free_u8_array(this.#ptr, this.#cap);
    this.#ptr = this.#cap = 0;
  }
}

/** Bytes of Ghostty's history per cell (its pages hold ~14 a cell with their metadata). */
const HISTORY_BYTES_PER_CELL = 16;

/** A pane's terminal on Ghostty's VT core. */
export class GhosttyEngine implements PaneEngine {
  readonly kind = "ghostty" as const;
  readonly jump = null;
  readonly trimmed = 0;
  /** Chunks whose parse trapped in the WebAssembly. */
  faults = 0;
  readonly parseNow: (data: Uint8Array) => void;
  #t: GhosttyTerminal;
  #io: Io;
  #history: number;
  #view: View | null = null;
  #titles: ((title: string) => void)[] = [];
  #replies: ((data: string) => void)[] = [];
  #osc = new OscScanner();

  constructor(size: EngineSize) {
    this.#t = ghosttyInstance().createTerminal(size.cols, size.rows, {
      scrollbackLimit: Math.max(1, size.scrollback) * size.cols * HISTORY_BYTES_PER_CELL,
      fgColor: DEFAULT_FG,
      bgColor: DEFAULT_BG,
      palette: PALETTE,
    });
    this.#io = new Io(this.#t as unknown as Wasm);
    this.#history = size.scrollback;
    this.parseNow = (data) => this.#parse(data);
  }

  #parse(data: Uint8Array): void {
    try {
      this.#io.write(data);
    } catch {
      // A fault in the WebAssembly (a trap) stays in this pane: the worker and its other panes go on.
      this.faults++;
    }
    this.#view = null;
    if (this.#titles.length) this.#osc.scan(data, (title) => this.#titles.forEach((fn) => fn(title)));
    if (this.#t.hasResponse()) {
      for (let r = this.#t.readResponse(); r !== null; r = this.#t.readResponse()) {
        for (const fn of this.#replies) fn(r);
      }
    }
  }

  get cols(): number {
    return this.#t.cols;
  }
  get rows(): number {
    return this.#t.rows;
  }
  get active(): EngineBuffer {
    return (this.#view ??= new View(this.#t, this.#io, this.#history));
  }
  reads(): BufferLike & { readonly type: string } {
    return this.active;
  }
  olderRows(_n: number): string[] {
    return [];
  }
  modes(): EngineModes {
    const t = this.#t;
    return {
      bracketedPaste: t.getMode(2004),
      applicationCursor: t.getMode(1),
      applicationKeypad: t.getMode(66),
      cursorHidden: !t.getMode(25),
    };
  }
  afterParse(): void {}
  write(data: Uint8Array | string, done?: () => void): void {
    if (typeof data === "string") data = new TextEncoder().encode(data);
    if (data.length) this.#parse(data);
    if (done) queueMicrotask(done);
  }
  resize(cols: number, rows: number): void {
    this.#t.resize(cols, rows);
    this.#view = null;
  }
  serialize(scrollback: number): { ansi: string; scrollback: number } {
    return serializeCells(this.active, this, this.modes(), scrollback);
  }
  onTitle(fn: (title: string) => void): void {
    this.#titles.push(fn);
  }
  onReply(fn: (data: string) => void): void {
    this.#replies.push(fn);
  }
  dispose(): void {
    this.#io.free();
    this.#t.free();
    this.#view = null;
  }
}

const ESC = 0x1b, BEL = 0x07, OSC_LIMIT = 4096;

/** Picks OSC 0 and 2 (the window title) out of a stream of output, across chunk boundaries. */
export class OscScanner {
  /** The body of an OSC being read, or null outside one. */
  #body: number[] | null = null;
  /** The chunk ended on ESC (outside an OSC: maybe its start; inside: maybe its end). */
  #esc = false;
  #decoder = new TextDecoder();

  scan(data: Uint8Array, onTitle: (title: string) => void): void {
    let i = 0;
    while (i < data.length) {
      if (this.#body === null) {
        if (this.#esc) {
          this.#esc = false;
          if (data[i] === 0x5d) this.#body = [];
          i++;
          continue;
        }
        const at = data.indexOf(ESC, i);
        if (at < 0) return;
        if (at + 1 >= data.length) {
          this.#esc = true;
          return;
        }
        if (data[at + 1] === 0x5d) this.#body = [];
        i = at + 2;
        continue;
      }
      const b = data[i++];
      if (this.#esc) {
        this.#esc = false;
        if (b === 0x5c) this.#end(onTitle);
        else this.#body = null; // another sequence cut it short
        continue;
      }
      if (b === BEL) this.#end(onTitle);
      else if (b === ESC) this.#esc = true;
      else if (this.#body.length < OSC_LIMIT) this.#body.push(b);
      else this.#body = null;
    }
  }

  #end(onTitle: (title: string) => void) {
    const body = this.#body!;
    this.#body = null;
    if ((body[0] === 0x30 || body[0] === 0x32) && body[1] === 0x3b) {
      onTitle(this.#decoder.decode(new Uint8Array(body.slice(2))));
    }
  }
}
