/**
 * Compact scrollback for a headless xterm.
 *
 * xterm keeps every scrollback row as a `BufferLine`: a `Uint32Array` of
 * 3 words per column plus a few objects, about 1.3 KB per 80-column row, so
 * 10,000 rows of history cost ~13 MB per pane (~20 MB of RSS). tmux keeps
 * ~0.4 KB per row. Here xterm keeps only a small staging scrollback
 * ({@link STAGING_ROWS}); every row it evicts from the top is kept as plain
 * text (and its soft-wrap flag) in a {@link RowStore}, ~0.1 KB per row.
 * Reading and searching see the store and xterm's buffer as one buffer
 * ({@link Scrollback.buffer}), so nothing above this module changes.
 *
 * Rows are captured where xterm evicts them, by wrapping the four methods of
 * the normal buffer's line list that drop rows off its top (`recycle`,
 * `push`, `splice`, `trimStart`), before they run. This relies on xterm
 * internals of the pinned version (@xterm/headless 6.0.0); when they are not
 * there, {@link Scrollback.attach} returns null and the caller keeps the
 * whole scrollback in xterm as before.
 *
 * Semantics kept from xterm: ED 3 (`CSI 3 J`, `clear`) and RIS (`ESC c`)
 * erase the scrollback, the store included. Not kept: rows in the store
 * are not reflowed when the pane's width changes (rows still in xterm are);
 * they keep the text, not the colours.
 *
 * @module
 */
import type { BufferLike } from "./screen.ts";

/** Rows of scrollback left inside xterm (they reflow on resize). */
export const STAGING_ROWS = 100;

/**
 * A ring of text rows, oldest first, with their soft-wrap flags.
 *
 * Rows whose characters are all below U+0100 (most output) live as bytes in
 * one growable arena, written straight from xterm's cells by
 * {@link RowStore.pushLine}: no string per row while output floods (the
 * profile of a flood showed a quarter of a worker's time in making row
 * strings and collecting them), and one byte per character. A row with any
 * other character is kept as a string. `text(i)` makes a row's string when
 * it is read.
 */
export class RowStore {
  /** Where each slot's bytes start (absolute arena position) and how many. */
  #off: Float64Array;
  #len: Uint32Array;
  #wrapped: Uint8Array;
  /** Rows that are not Latin-1, by slot. */
  #wide: (string | undefined)[];
  #arena = new Uint8Array(16 * 1024);
  /** Absolute position of the next byte (the arena holds `position % size`). */
  #head = 0;
  #start = 0;
  #count = 0;

  constructor(readonly capacity: number) {
    const n = Math.max(0, capacity);
    this.#off = new Float64Array(n);
    this.#len = new Uint32Array(n);
    this.#wrapped = new Uint8Array(n);
    this.#wide = new Array(n);
  }

  get length(): number {
    return this.#count;
  }

  /** Takes a slot for a new row (dropping the oldest when full); returns it and how many rows fell off. */
  #slot(): [number, number] {
    if (this.#count < this.capacity) return [(this.#start + this.#count++) % this.capacity, 0];
    const slot = this.#start;
    this.#start = (this.#start + 1) % this.capacity;
    this.#wide[slot] = undefined;
    this.#len[slot] = 0;
    return [slot, 1];
  }

  /** Makes room for `n` more bytes after the rows kept. */
  #reserve(n: number) {
    const tail = this.#count ? this.#off[this.#start] : this.#head;
    const size = this.#arena.length;
    if (this.#head + n - tail <= size) return;
    let grown = size * 2;
    while (this.#head + n - tail > grown) grown *= 2;
    const arena = new Uint8Array(grown);
    // Copy the live bytes [tail, head) in runs that wrap in neither arena.
    for (let p = tail; p < this.#head;) {
      const from = p % size;
      const to = p % grown;
      const n = Math.min(this.#head - p, size - from, grown - to);
      arena.set(this.#arena.subarray(from, from + n), to);
      p += n;
    }
    this.#arena = arena;
  }

  /** Appends a row; returns how many rows fell off the top (0 or 1). */
  push(text: string, wrapped: boolean): number {
    if (this.capacity <= 0) return 1;
    const [slot, dropped] = this.#slot();
    this.#wrapped[slot] = wrapped ? 1 : 0;
    this.#off[slot] = this.#head;
    this.#len[slot] = 0;
    this.#wide[slot] = text;
    return dropped;
  }

  /**
   * Appends xterm's row `line` as `lineText` reads it, without making a string
   * when it is Latin-1; returns how many rows fell off the top (0 or 1).
   */
  pushLine(line: LineInternals): number {
    const data = line._data;
    if (this.capacity <= 0) return 1;
    const dropped = data instanceof Uint32Array ? this.#pushLatin1(line, data) : -1;
    return dropped >= 0 ? dropped : this.push(lineText(line), line.isWrapped);
  }

  /** Stores a Latin-1 row from its cells; returns rows dropped, or -1 (nothing stored) when it has another character. */
  #pushLatin1(line: LineInternals, data: Uint32Array): number {
    let end = data.length / 3;
    while (end > 0 && (data[(end - 1) * 3] & CONTENT) === 0) end--;
    this.#reserve(end);
    const arena = this.#arena;
    const size = arena.length;
    let p = this.#head;
    // Writes at `at` until the arena's end, then wraps once (a row is never longer than the arena).
    let at = p % size;
    for (let x = 0; x < end;) {
      const word = data[x * 3];
      const cp = word & CODEPOINT;
      if (cp > 0xff || word & COMBINED) return -1;
      if (at === size) at = 0;
      arena[at++] = cp || 32;
      p++;
      x += (word >> 22) || 1;
    }
    const [slot, dropped] = this.#slot();
    this.#wrapped[slot] = line.isWrapped ? 1 : 0;
    this.#off[slot] = this.#head;
    this.#len[slot] = p - this.#head;
    this.#head = p;
    return dropped;
  }

  text(i: number): string {
    const slot = (this.#start + i) % this.capacity;
    const wide = this.#wide[slot];
    if (wide !== undefined) return wide;
    const size = this.#arena.length;
    const from = this.#off[slot] % size;
    const n = this.#len[slot];
    if (from + n <= size) return latin1(this.#arena.subarray(from, from + n));
    return latin1(this.#arena.subarray(from)) + latin1(this.#arena.subarray(0, from + n - size));
  }

  wrapped(i: number): boolean {
    return this.#wrapped[(this.#start + i) % this.capacity] === 1;
  }

  /** Drops every row; returns how many there were. */
  clear(): number {
    const n = this.#count;
    this.#count = 0;
    this.#start = 0;
    this.#wide.fill(undefined);
    return n;
  }
}

const CONTENT = 0x3fffff;

function latin1(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 4096) {
    // deno-lint-ignore no-explicit-any
    out += String.fromCharCode.apply(null, bytes.subarray(i, i + 4096) as any);
  }
  return out;
}

/** The parts of xterm's internal `BufferLine` used here. */
interface LineInternals {
  isWrapped: boolean;
  _data?: Uint32Array;
  _combined?: Record<number, string>;
  getTrimmedLength?(): number;
  translateToString(trimRight?: boolean): string;
}

/** The parts of xterm's internal `CircularList` of rows used here. */
interface LineList {
  readonly length: number;
  get(i: number): LineInternals | undefined;
  recycle(): LineInternals;
  push(line: LineInternals): void;
  splice(start: number, deleteCount: number, ...items: LineInternals[]): void;
  trimStart(count: number): void;
  readonly maxLength: number;
}

/** The parts of xterm's internal core used here. */
interface CoreInternals {
  buffers: {
    normal: { lines: LineList };
    active: unknown;
    onBufferActivate(listener: () => void): unknown;
  };
}

const CODEPOINT = 0x1fffff;
const COMBINED = 0x200000;
const scratch = new Uint16Array(4096);

function flushScratch(n: number): string {
  // deno-lint-ignore no-explicit-any
  return n ? String.fromCharCode.apply(null, scratch.subarray(0, n) as any) : "";
}

/**
 * The text of an xterm row, as `translateToString(true)` gives it, read
 * straight from the cells (several times faster: it runs for every row
 * that scrolls out, 600k rows for 100 MiB of output).
 */
export function lineText(line: LineInternals): string {
  const data = line._data;
  if (!(data instanceof Uint32Array) || typeof line.getTrimmedLength !== "function") {
    return line.translateToString(true);
  }
  const end = line.getTrimmedLength();
  if (end > scratch.length) return line.translateToString(true);
  let out = "";
  let n = 0;
  for (let x = 0; x < end;) {
    const word = data[x * 3];
    const cp = word & CODEPOINT;
    if (word & COMBINED) {
      out += flushScratch(n) + (line._combined?.[x] ?? "");
      n = 0;
    } else if (cp > 0xffff) {
      out += flushScratch(n) + String.fromCodePoint(cp);
      n = 0;
    } else {
      scratch[n++] = cp || 32;
    }
    x += (word >> 22) || 1;
  }
  return out + flushScratch(n);
}

/** A pane's scrollback: xterm's staging rows plus the compact store. */
export class Scrollback {
  readonly store: RowStore;
  /** Rows dropped off the top for good (store and xterm together). */
  trimmed = 0;
  #core: CoreInternals;
  #lines: LineList | null = null;
  #erasing = false;

  private constructor(core: CoreInternals, capacity: number) {
    this.#core = core;
    this.store = new RowStore(capacity);
  }

  /**
   * Hooks a terminal created with `scrollback: stagingRows(total)`;
   * null when xterm's internals are not as expected.
   */
  static attach(
    // deno-lint-ignore no-explicit-any
    term: any,
    total: number,
  ): Scrollback | null {
    const core = term?._core as CoreInternals | undefined;
    const lines = core?.buffers?.normal?.lines;
    if (
      !core || !lines || typeof core.buffers.onBufferActivate !== "function" ||
      !["recycle", "push", "splice", "trimStart", "get"].every((m) =>
        typeof (lines as unknown as Record<string, unknown>)[m] === "function"
      ) || typeof term.parser?.registerCsiHandler !== "function"
    ) {
      return null;
    }
    const sb = new Scrollback(core, total - stagingRows(total));
    sb.#hook();
    // A full reset (RIS) replaces the buffers: the scrollback is gone.
    core.buffers.onBufferActivate(() => {
      if (core.buffers.normal.lines !== sb.#lines) {
        sb.trimmed += sb.store.clear();
        sb.#hook();
      }
    });
    // ED 3 erases the scrollback: xterm trims its rows; the store goes too.
    term.parser.registerCsiHandler({ final: "J" }, (params: ArrayLike<number | number[]>) => {
      // In the alternate screen ED 3 erases nothing (it has no scrollback).
      if (params[0] === 3 && core.buffers.active === core.buffers.normal) {
        sb.trimmed += sb.store.clear();
        sb.#erasing = true;
      }
      return false;
    });
    return sb;
  }

  /** Call once xterm has parsed a chunk. */
  afterParse(): void {
    this.#erasing = false;
  }

  #keep(line: LineInternals | undefined) {
    if (this.#erasing || !line) {
      this.trimmed++;
      return;
    }
    this.trimmed += this.store.pushLine(line);
  }

  #hook() {
    const lines = this.#core.buffers.normal.lines;
    this.#lines = lines;
    const keepFirst = (n: number) => {
      for (let i = 0; i < n; i++) {
        try {
          this.#keep(lines.get(i));
        } catch {
          this.trimmed++; // never let a capture failure break xterm's scroll
        }
      }
    };
    const recycle = lines.recycle.bind(lines);
    const push = lines.push.bind(lines);
    const splice = lines.splice.bind(lines);
    const trimStart = lines.trimStart.bind(lines);
    Object.assign(lines, {
      recycle: () => {
        keepFirst(1);
        return recycle();
      },
      push: (line: LineInternals) => {
        if (lines.length === lines.maxLength) keepFirst(1);
        push(line);
      },
      splice: (start: number, deleteCount: number, ...items: LineInternals[]) => {
        const over = lines.length - Math.min(deleteCount, lines.length - start) + items.length -
          lines.maxLength;
        if (over > 0) keepFirst(Math.min(over, start));
        splice(start, deleteCount, ...items);
      },
      trimStart: (count: number) => {
        keepFirst(Math.min(count, lines.length));
        trimStart(count);
      },
    });
  }

  /**
   * Runs `resize` (xterm's reflow) with room for every row it produces;
   * rows beyond the staging area then move into the store instead of being
   * dropped.
   */
  // deno-lint-ignore no-explicit-any
  resize(term: any, resize: () => void): void {
    const staging = term.options.scrollback;
    term.options.scrollback = staging + 4 * (term.rows + staging) + 1000;
    try {
      resize();
    } finally {
      term.options.scrollback = staging;
    }
  }

  /** The store and xterm's buffer `buf` as one buffer. */
  buffer<B extends BufferLike & { readonly type?: string }>(buf: B): BufferLike & { readonly type?: string } {
    const store = this.store;
    const n = store.length;
    if (n === 0 || buf.type === "alternate") return buf;
    return {
      type: buf.type,
      length: n + buf.length,
      baseY: n + buf.baseY,
      cursorY: buf.cursorY,
      cursorX: buf.cursorX,
      getLine(y: number) {
        if (y >= n) return buf.getLine(y - n);
        if (y < 0) return undefined;
        const text = store.text(y);
        return { isWrapped: store.wrapped(y), translateToString: () => text };
      },
    };
  }
}

/** Rows of scrollback to give xterm itself when `total` are wanted. */
export function stagingRows(total: number): number {
  return Math.min(total, STAGING_ROWS);
}
