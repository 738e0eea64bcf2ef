/**
 * The normal screen's rows while a full-screen program holds the alternate
 * screen: nothing writes into them until it leaves, so each is cut to the
 * cells written, and grown back cell for cell the same before anything
 * reads it (the program leaves, the pane is resized, `surface.screen`
 * serializes both screens).
 *
 * xterm keeps every row at full width, 12 bytes a cell: a Claude Code
 * pane's normal screen is 50 rows of 200 columns, 120 KB, almost all of it
 * blank cells, beside its alternate screen's own 120 KB. A row is cut only
 * where every cell from some column on is xterm's null cell with default
 * colours, which is what growing it back fills in: the screen after the
 * round trip is the one before it. Uses xterm's `BufferLine.resize` and
 * `cleanupMemory` (@xterm/headless 6.0.0, like ./scrollback.ts).
 *
 * @module
 */

/** A blank cell's first word: code point 0 (`NULL_CELL_CODE`), width 1 (`NULL_CELL_WIDTH`). */
const NULL_CONTENT = 1 << 22;

/** The parts of xterm's internal `BufferLine` used here. */
export interface ParkableLine {
  _data?: Uint32Array;
  length: number;
  resize(cols: number, fill: unknown): boolean;
  cleanupMemory(): number;
}

/** The parts of xterm's internal `Buffer` used here. */
export interface ParkableBuffer {
  lines: { readonly length: number; get(i: number): ParkableLine | undefined };
  /** xterm's null cell; without attributes, with default colours. */
  getNullCell(): unknown;
}

/** Cells of `data` (3 words each) before its trailing run of blank cells. */
function written(data: Uint32Array): number {
  let i = data.length - 3;
  while (i >= 0 && data[i] === NULL_CONTENT && data[i + 1] === 0 && data[i + 2] === 0) i -= 3;
  return (i + 3) / 3;
}

/** The rows of one buffer cut to their written cells, and the width to give them back. */
export class ParkedRows {
  #rows: ParkableLine[] = [];
  #buffer: ParkableBuffer | null = null;
  #cols = 0;

  /** How many rows are cut now. */
  get length(): number {
    return this.#rows.length;
  }

  /**
   * Cuts every row of `buffer` (`cols` wide) that is less than half
   * written to its written cells (at least one), freeing the rest.
   */
  park(buffer: ParkableBuffer, cols: number): void {
    this.unpark();
    if (typeof buffer.getNullCell !== "function") return;
    this.#buffer = buffer;
    this.#cols = cols;
    const fill = buffer.getNullCell();
    for (let y = 0; y < buffer.lines.length; y++) {
      const line = buffer.lines.get(y);
      const data = line?._data;
      if (!line || !(data instanceof Uint32Array) || line.length !== cols || data.length !== 3 * cols) {
        continue;
      }
      if (typeof line.resize !== "function" || typeof line.cleanupMemory !== "function") continue;
      const keep = Math.max(1, written(data));
      if (2 * keep >= cols) continue;
      line.resize(keep, fill);
      line.cleanupMemory();
      this.#rows.push(line);
    }
  }

  /** Grows every cut row back to its width, blank cells as before. */
  unpark(): void {
    const buffer = this.#buffer;
    const rows = this.#rows;
    this.#rows = [];
    this.#buffer = null;
    if (!buffer || !rows.length) return;
    const fill = buffer.getNullCell();
    for (const line of rows) if (line.length !== this.#cols) line.resize(this.#cols, fill);
  }

  /** Forgets the cut rows (their buffer was replaced: nothing will read them). */
  drop(): void {
    this.#rows = [];
    this.#buffer = null;
  }
}
