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

/** A ring of text rows, oldest first, with their soft-wrap flags. */
export class RowStore {
  #rows: string[] = [];
  #wrapped: Uint8Array;
  #start = 0;

  constructor(readonly capacity: number) {
    this.#wrapped = new Uint8Array(Math.max(0, capacity));
  }

  get length(): number {
    return this.#rows.length;
  }

  /** Appends a row; returns how many rows fell off the top (0 or 1). */
  push(text: string, wrapped: boolean): number {
    if (this.capacity <= 0) return 1;
    if (this.#rows.length < this.capacity) {
      this.#wrapped[this.#rows.length] = wrapped ? 1 : 0;
      this.#rows.push(text);
      return 0;
    }
    this.#rows[this.#start] = text;
    this.#wrapped[this.#start] = wrapped ? 1 : 0;
    this.#start = (this.#start + 1) % this.capacity;
    return 1;
  }

  text(i: number): string {
    return this.#rows[(this.#start + i) % this.#rows.length];
  }

  wrapped(i: number): boolean {
    return this.#wrapped[(this.#start + i) % this.#rows.length] === 1;
  }

  /** Drops every row; returns how many there were. */
  clear(): number {
    const n = this.#rows.length;
    this.#rows = [];
    this.#start = 0;
    return n;
  }
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
    this.trimmed += this.store.push(lineText(line), line.isWrapped);
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
