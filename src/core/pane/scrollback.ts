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
import { lineHash, textHash } from "./row_hash.ts";
import { type ParkableBuffer, ParkedRows } from "./parked_rows.ts";
import { type LineInternals, RowStore } from "./row_store.ts";

/** Rows of scrollback left inside xterm (they reflow on resize). */
export const STAGING_ROWS = 100;

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
    normal: { lines: LineList } & ParkableBuffer;
    active: unknown;
    onBufferActivate(listener: () => void): unknown;
  };
}

/** A pane's scrollback: xterm's staging rows plus the compact store. */
export class Scrollback {
  readonly store: RowStore;
  /** Rows dropped off the top for good (store and xterm together). */
  trimmed = 0;
  #core: CoreInternals;
  #lines: LineList | null = null;
  #erasing = false;
  /** Rows xterm evicts next that are in the store already ({@link storeAhead}). */
  #skip = 0;
  /**
   * {@link lineHash} of xterm's rows above the screen, by row object, with
   * the row's absolute number (rows dropped + stored + its index in xterm):
   * a program cannot change those rows, so each is hashed once, not on
   * every `read`. xterm reuses a row object that leaves its top for a new
   * row with another number, so an entry holds only while the numbers
   * match (and all go on a resize or a reset).
   */
  #hashes = new WeakMap<LineInternals, { abs: number; hash: number }>();
  /** The normal screen's rows cut while the alternate screen is active. */
  #parked = new ParkedRows();

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
    const staging = stagingRows(total);
    const sb = new Scrollback(core, total - staging);
    sb.#hook();
    core.buffers.onBufferActivate(() => {
      // A full reset (RIS) replaces the buffers: the scrollback is gone.
      if (core.buffers.normal.lines !== sb.#lines) {
        sb.trimmed += sb.store.clear();
        sb.#skip = 0;
        sb.#hashes = new WeakMap();
        sb.#parked.drop();
        sb.#hook();
      }
      // While a full-screen program holds the alternate screen, the normal
      // screen's staging rows (2.4 KB each at 200 columns: a quarter of a
      // Claude Code pane's memory) move into the store, as many as it has
      // room for (none is dropped); they come back into use, empty, when it
      // leaves. The rows left are cut to their written cells (./parked_rows.ts).
      const alternate = core.buffers.active !== core.buffers.normal;
      if (!alternate) sb.#parked.unpark();
      const room = Math.min(staging, sb.store.capacity - sb.store.length);
      const want = alternate ? staging - room : staging;
      if (term.options.scrollback !== want) term.options.scrollback = want;
      if (alternate) sb.#parked.park(core.buffers.normal, term.cols);
    });
    // ED 3 erases the scrollback: xterm trims its rows; the store goes too.
    term.parser.registerCsiHandler({ final: "J" }, (params: ArrayLike<number | number[]>) => {
      // In the alternate screen ED 3 erases nothing (it has no scrollback).
      if (params[0] === 3 && core.buffers.active === core.buffers.normal) {
        sb.trimmed += sb.store.clear();
        // xterm trims the rows above the screen, if there are any, right after this.
        sb.#erasing = core.buffers.normal.lines.length > term.rows;
      }
      return false;
    });
    return sb;
  }

  /** Call once xterm has parsed a chunk. */
  afterParse(): void {
    this.#erasing = false;
  }

  /**
   * Stores xterm's first `n` rows now, as evicting them would, and skips
   * them when xterm evicts them later (./fast_forward.ts stores the rows of
   * a run it lays out itself after them).
   */
  storeAhead(n: number): void {
    const lines = this.#lines!;
    for (let i = 0; i < n; i++) this.#keep(lines.get(i));
    this.#skip += n;
  }

  /** Stores a row laid out without xterm: the Latin-1 characters `src[from, to)`. */
  pushRow(src: Uint8Array, from: number, to: number, wrapped: boolean): void {
    this.trimmed += this.store.pushLatin1(src, from, to, wrapped);
  }

  /** Stores a row of another terminal (a line laid out elsewhere, ./fast_forward.ts). */
  pushLine(line: LineInternals): void {
    this.trimmed += this.store.pushLine(line);
  }

  /** Rows still to be skipped when xterm evicts them. */
  get skipping(): number {
    return this.#skip;
  }

  #keep(line: LineInternals | undefined) {
    if (this.#skip > 0) {
      this.#skip--;
      return;
    }
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
        // ED 3's trim is done: rows that scroll out after it are history again.
        this.#erasing = false;
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
    this.#hashes = new WeakMap();
    try {
      this.withNormalRows(term, resize);
    } finally {
      term.options.scrollback = staging;
    }
  }

  /** Runs `fn` with the normal screen's rows whole (while the alternate screen is active they are cut). */
  withNormalRows<T>(term: { readonly cols: number }, fn: () => T): T {
    if (!this.#parked.length) return fn();
    this.#parked.unpark();
    try {
      return fn();
    } finally {
      if (this.#core.buffers.active !== this.#core.buffers.normal) {
        this.#parked.park(this.#core.buffers.normal, term.cols);
      }
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
      rowHash: (y: number) => {
        if (y < n) return y < 0 ? textHash("") : store.hash(y);
        const line = this.#lines?.get(y - n);
        if (!line || this.#lines !== this.#core.buffers.normal.lines) return null;
        if (y - n >= buf.baseY) return lineHash(line);
        const abs = this.trimmed + y;
        const kept = this.#hashes.get(line);
        if (kept?.abs === abs) return kept.hash;
        const hash = lineHash(line);
        if (hash !== null) this.#hashes.set(line, { abs, hash });
        return hash;
      },
      getLine(y: number) {
        if (y >= n) return buf.getLine(y - n);
        if (y < 0) return undefined;
        return {
          isWrapped: store.wrapped(y),
          translateToString: () => store.text(y),
          hash: () => store.hash(y),
        };
      },
    };
  }
}

/** Rows of scrollback to give xterm itself when `total` are wanted. */
export function stagingRows(total: number): number {
  return Math.min(total, STAGING_ROWS);
}
