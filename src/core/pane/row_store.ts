/**
 * The compact scrollback's rows: text in one growable byte arena, written
 * straight from xterm's cells (./scrollback.ts keeps a pane's).
 *
 * @module
 */
import { unitsHash } from "./row_hash.ts";

/**
 * A ring of text rows, oldest first, with their soft-wrap flags.
 *
 * Every row lives in one growable byte arena, written straight from xterm's
 * cells by {@link RowStore.pushLine}: no string per row while output floods
 * (the profile of a flood showed a quarter of a worker's time in making row
 * strings and collecting them). A row whose characters are all below U+0100
 * (most output) takes one byte per character; any other row takes its
 * UTF-16 code units (two bytes each, at an even offset). A row never wraps
 * around the arena's end (the bytes left there are skipped), so it is
 * written and read as one run. `text(i)` makes a row's string when it is
 * read.
 */
export class RowStore {
  /** Where each slot's bytes start (absolute arena position) and how many. */
  #off: Float64Array;
  #len: Uint32Array;
  /** Per slot: {@link WRAPPED}, {@link UTF16} and {@link HASHED}. */
  #flags: Uint8Array;
  /** Per slot: the row's {@link textHash}, once asked for (a row in the store never changes); made at the first. */
  #hashes: Uint32Array | null = null;
  #arena = new Uint8Array(ARENA_MIN);
  #units = new Uint16Array(this.#arena.buffer);
  /** Absolute position of the next byte (the arena holds `position % size`). */
  #head = 0;
  #start = 0;
  #count = 0;

  /**
   * Slots in the ring now: they grow to `capacity` as rows come (13 bytes a
   * slot: 130 KB a pane for 10,000 rows up front, most of it for history a
   * full-screen program never makes).
   */
  #size: number;

  constructor(readonly capacity: number) {
    this.#size = Math.min(Math.max(0, capacity), SLOTS_MIN);
    this.#off = new Float64Array(this.#size);
    this.#len = new Uint32Array(this.#size);
    this.#flags = new Uint8Array(this.#size);
  }

  /** Moves the slots into a ring of `size`, oldest first from its start. */
  #resize(size: number) {
    const off = new Float64Array(size);
    const len = new Uint32Array(size);
    const flags = new Uint8Array(size);
    const hashes = this.#hashes ? new Uint32Array(size) : null;
    for (let i = 0; i < this.#count; i++) {
      const slot = (this.#start + i) % this.#size;
      off[i] = this.#off[slot];
      len[i] = this.#len[slot];
      flags[i] = this.#flags[slot];
      if (hashes) hashes[i] = this.#hashes![slot];
    }
    this.#off = off;
    this.#len = len;
    this.#flags = flags;
    this.#hashes = hashes;
    this.#start = 0;
    this.#size = size;
  }

  get length(): number {
    return this.#count;
  }

  /**
   * Makes room for a run of `n` bytes (starting at an even position when
   * `even`) that does not wrap around the arena; returns where it starts in
   * the arena, with {@link #head} moved to it.
   */
  #room(n: number, even: boolean): number {
    while (true) {
      const size = this.#arena.length;
      const tail = this.#count ? this.#off[this.#start] : this.#head;
      let at = this.#head % size;
      let skip = even ? at & 1 : 0;
      if (at + skip + n > size) skip = size - at;
      if (this.#head + skip + n - tail <= size) {
        this.#head += skip;
        at += skip;
        return at === size ? 0 : at;
      }
      this.#grow(this.#head - tail + n + 1);
    }
  }

  /**
   * Moves the rows into a new arena with room for `need` bytes and half as
   * much again, laid out from its start in order (so its size need not be
   * a multiple of the old one, and no skipped bytes are carried over).
   */
  #grow(need: number) {
    const old = this.#arena;
    const arena = new Uint8Array(Math.max(ARENA_MIN, (Math.ceil(need * 1.5) + 4095) & ~4095));
    let p = 0;
    for (let i = 0; i < this.#count; i++) {
      const slot = (this.#start + i) % this.#size;
      const n = this.#len[slot];
      if (this.#flags[slot] & UTF16) p += p & 1;
      const from = this.#off[slot] % old.length;
      arena.set(old.subarray(from, from + n), p);
      this.#off[slot] = p;
      p += n;
    }
    this.#head = p;
    this.#arena = arena;
    this.#units = new Uint16Array(arena.buffer);
  }

  /**
   * Records the row written at the head (where {@link #room} moved it),
   * `bytes` long; returns how many rows fell off the top (0 or 1).
   */
  #commit(bytes: number, flags: number): number {
    let slot: number;
    let dropped = 0;
    if (this.#count < this.capacity) {
      if (this.#count === this.#size) this.#resize(Math.min(this.capacity, this.#size * 2));
      slot = (this.#start + this.#count++) % this.#size;
    } else {
      slot = this.#start;
      this.#start = slot + 1 === this.#size ? 0 : slot + 1;
      dropped = 1;
    }
    this.#off[slot] = this.#head;
    this.#len[slot] = bytes;
    this.#flags[slot] = flags;
    this.#head += bytes;
    return dropped;
  }

  /** Appends a row; returns how many rows fell off the top (0 or 1). */
  push(text: string, wrapped: boolean): number {
    if (this.capacity <= 0) return 1;
    const n = text.length;
    let wide = false;
    for (let i = 0; i < n && !wide; i++) wide = text.charCodeAt(i) > 0xff;
    if (!wide) {
      const at = this.#room(n, false);
      const arena = this.#arena;
      for (let i = 0; i < n; i++) arena[at + i] = text.charCodeAt(i);
      return this.#commit(n, wrapped ? WRAPPED : 0);
    }
    const at = this.#room(2 * n, true);
    const units = this.#units;
    const u = at >> 1;
    for (let i = 0; i < n; i++) units[u + i] = text.charCodeAt(i);
    return this.#commit(2 * n, (wrapped ? WRAPPED : 0) | UTF16);
  }

  /** Appends the row of Latin-1 characters `src[from, to)`; returns how many rows fell off the top (0 or 1). */
  pushLatin1(src: Uint8Array, from: number, to: number, wrapped: boolean): number {
    if (this.capacity <= 0) return 1;
    const at = this.#room(to - from, false) - from;
    const arena = this.#arena;
    for (let i = from; i < to; i++) arena[at + i] = src[i];
    return this.#commit(to - from, wrapped ? WRAPPED : 0);
  }

  /**
   * Appends xterm's row `line` as `lineText` reads it, without making a
   * string; returns how many rows fell off the top (0 or 1).
   */
  pushLine(line: LineInternals): number {
    if (this.capacity <= 0) return 1;
    const data = line._data;
    if (!(data instanceof Uint32Array)) return this.push(lineText(line), line.isWrapped);
    // The cells up to the last one written (xterm's getTrimmedLength), four at a time first.
    let last = data.length - 3;
    while (last >= 9 && ((data[last] | data[last - 3] | data[last - 6] | data[last - 9]) & CONTENT) === 0) {
      last -= 12;
    }
    while (last >= 0 && (data[last] & CONTENT) === 0) last -= 3;
    const end = (last + 3) / 3;
    // Latin-1 first (one byte per cell), checked once for the whole row: a
    // cell with a code point above U+00FF, combined characters or a width
    // of 2 sends the row to the UTF-16 path below.
    const at = this.#room(end, false);
    const arena = this.#arena;
    let p = at;
    let seen = 0;
    for (let i = 0; i <= last; i += 3) {
      const word = data[i];
      seen |= word;
      arena[p++] = (word & 0xff) || 32;
    }
    if ((seen & NOT_LATIN1) === 0) return this.#commit(end, line.isWrapped ? WRAPPED : 0);
    // Another character: the row's UTF-16 code units instead.
    const n = lineUnits(line, data, end);
    if (n < 0) return this.push(lineText(line), line.isWrapped);
    const at16 = this.#room(2 * n, true);
    this.#units.set(scratch.subarray(0, n), at16 >> 1);
    return this.#commit(2 * n, (line.isWrapped ? WRAPPED : 0) | UTF16);
  }

  text(i: number): string {
    const slot = (this.#start + i) % this.#size;
    const size = this.#arena.length;
    const from = this.#off[slot] % size;
    const n = this.#len[slot];
    if (this.#flags[slot] & UTF16) return fromUnits(this.#units.subarray(from >> 1, (from + n) >> 1));
    return fromUnits(this.#arena.subarray(from, from + n));
  }

  wrapped(i: number): boolean {
    return (this.#flags[(this.#start + i) % this.#size] & WRAPPED) !== 0;
  }

  /** {@link textHash} of row `i`'s text, without making the string. */
  hash(i: number): number {
    const slot = (this.#start + i) % this.#size;
    const flags = this.#flags[slot];
    const hashes = this.#hashes ??= new Uint32Array(this.#size);
    if (flags & HASHED) return hashes[slot];
    const from = this.#off[slot] % this.#arena.length;
    const n = this.#len[slot];
    const h = flags & UTF16
      ? unitsHash(this.#units, from >> 1, (from + n) >> 1)
      : unitsHash(this.#arena, from, from + n);
    hashes[slot] = h;
    this.#flags[slot] = flags | HASHED;
    return h;
  }

  /** Drops every row; returns how many there were. */
  clear(): number {
    const n = this.#count;
    this.#count = 0;
    this.#start = 0;
    this.#head = 0;
    if (this.#arena.length > ARENA_MIN) {
      this.#arena = new Uint8Array(ARENA_MIN);
      this.#units = new Uint16Array(this.#arena.buffer);
    }
    if (this.#size > SLOTS_MIN) this.#resize(Math.min(this.capacity, SLOTS_MIN));
    return n;
  }
}

const ARENA_MIN = 16 * 1024;
const SLOTS_MIN = 256;
const WRAPPED = 1;
const UTF16 = 2;
const HASHED = 4;
const CONTENT = 0x3fffff;
/** Bits of a cell's first word set by a code point above U+00FF, combined characters or a width of 2 (or 3). */
const NOT_LATIN1 = 0xbfff00;

function fromUnits(units: Uint8Array | Uint16Array): string {
  let out = "";
  for (let i = 0; i < units.length; i += 4096) {
    // deno-lint-ignore no-explicit-any
    out += String.fromCharCode.apply(null, units.subarray(i, i + 4096) as any);
  }
  return out;
}

/**
 * Writes the UTF-16 code units of the first `end` cells of `line` (as
 * `lineText` reads them) into {@link scratch}; returns how many, or -1 when
 * they do not fit.
 */
function lineUnits(line: LineInternals, data: Uint32Array, end: number): number {
  let n = 0;
  const max = scratch.length;
  for (let x = 0; x < end;) {
    const word = data[x * 3];
    const cp = word & CODEPOINT;
    if (word & COMBINED) {
      const s = line._combined?.[x] ?? "";
      if (n + s.length > max) return -1;
      for (let i = 0; i < s.length; i++) scratch[n++] = s.charCodeAt(i);
    } else if (cp > 0xffff) {
      if (n + 2 > max) return -1;
      scratch[n++] = 0xd800 + ((cp - 0x10000) >> 10);
      scratch[n++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
    } else {
      if (n + 1 > max) return -1;
      scratch[n++] = cp || 32;
    }
    x += (word >> 22) || 1;
  }
  return n;
}

/** The parts of xterm's internal `BufferLine` used here. */
export interface LineInternals {
  isWrapped: boolean;
  _data?: Uint32Array;
  _combined?: Record<number, string>;
  getTrimmedLength?(): number;
  translateToString(trimRight?: boolean): string;
}

const CODEPOINT = 0x1fffff;
const COMBINED = 0x200000;
const scratch = new Uint16Array(8192);

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
