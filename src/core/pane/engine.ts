/**
 * A pane's terminal engine: what everything above the terminal (reads,
 * search, `read --since`, the screen a client replays, sessions' snapshots,
 * the worker's parse loop) uses of it. Two engines stand behind it:
 * xterm.js (./xterm_engine.ts: @xterm/headless with the compact scrollback
 * and jump scroll) and Ghostty's VT core compiled to WebAssembly
 * (./ghostty_engine.ts, the `ghostty-web` package). docs/engines.md says
 * where they differ.
 *
 * The read side is xterm's buffer API, cut to what is used: xterm's own
 * buffer, line and cell objects satisfy it as they are, so the xterm engine
 * hands them out without a copy; another engine adapts to it.
 *
 * @module
 */
import type { EngineKind } from "../../spec/engines.ts";
import type { BufferLike } from "./screen.ts";

export type { EngineKind };

/** One cell of a row (xterm's `IBufferCell`, the part used). */
export interface EngineCell {
  /** The cell's text; "" for a cell never written and for a wide character's second cell. */
  getChars(): string;
  /** 1, 2 for a wide character, 0 for the cell after one. */
  getWidth(): number;
  isFgDefault(): boolean;
  isBgDefault(): boolean;
  isFgRGB(): boolean;
  isBgRGB(): boolean;
  isFgPalette(): boolean;
  isBgPalette(): boolean;
  /** A palette index, or 0xRRGGBB when RGB. */
  getFgColor(): number;
  getBgColor(): number;
  isBold(): number;
  isDim(): number;
  isItalic(): number;
  isUnderline(): number;
  isInverse(): number;
  isBlink(): number;
  isInvisible(): number;
  isStrikethrough(): number;
}

/** One row (xterm's `IBufferLine`, the part used). */
export interface EngineLine {
  readonly isWrapped: boolean;
  readonly length: number;
  /** Cell `x`; `reuse` may be filled in and returned instead of a new object. */
  getCell(x: number, reuse?: EngineCell): EngineCell | undefined;
  /** The row's text; `trimRight` drops the cells never written at its end. */
  translateToString(trimRight?: boolean, startColumn?: number, endColumn?: number): string;
}

/** A screen with the scrollback the engine keeps itself (xterm's `IBuffer`, the part used). */
export interface EngineBuffer {
  readonly type: "normal" | "alternate";
  readonly length: number;
  /** Row index of the screen's top row. */
  readonly baseY: number;
  readonly cursorX: number;
  readonly cursorY: number;
  getLine(y: number): EngineLine | undefined;
}

/** The modes a writer or a snapshot needs to know. */
export interface EngineModes {
  bracketedPaste: boolean;
  applicationCursor: boolean;
  applicationKeypad: boolean;
  cursorHidden: boolean;
}

/** A pane's terminal. */
export interface PaneEngine {
  readonly kind: EngineKind;
  readonly cols: number;
  readonly rows: number;
  /** The active screen with the scrollback rows the engine holds itself. */
  readonly active: EngineBuffer;
  /** What reads see: {@link active}, with the compact scrollback's rows above it on the normal screen. */
  reads(): BufferLike & { readonly type: string };
  /** Rows dropped off the top of the normal screen's history for good. */
  readonly trimmed: number;
  /** The newest `n` rows older than the engine's own buffer, as text (the compact scrollback's). */
  olderRows(n: number): string[];
  modes(): EngineModes;
  /** Parses a chunk synchronously; null when the engine cannot (then {@link write}). */
  readonly parseNow: ((data: Uint8Array) => void) | null;
  /** Parses a batch of a plain-text flood, laying out rows it scrolls away cheaply; null: none. */
  readonly jump: { parse(data: Uint8Array): void; readonly skipped: number } | null;
  /** Call once a chunk or batch is parsed. */
  afterParse(): void;
  /** Parses `data` after what is queued; `done` runs once it is on the screen. */
  write(data: Uint8Array | string, done?: () => void): void;
  resize(cols: number, rows: number): void;
  /**
   * The screen and up to `scrollback` rows above it as one ANSI string that
   * a terminal replays into the same screen (colours, attributes, wide
   * characters, the alternate screen), and how many rows of scrollback it holds.
   */
  serialize(scrollback: number): { ansi: string; scrollback: number };
  /** `fn` gets each new window title (OSC 0 and 2). */
  onTitle(fn: (title: string) => void): void;
  /** `fn` gets what the terminal answers to a query (DA, DSR) for the program. */
  onReply(fn: (data: string) => void): void;
  dispose(): void;
}

/** The size and history of a new pane's terminal. */
export interface EngineSize {
  cols: number;
  rows: number;
  /** Rows of history kept above the screen. */
  scrollback: number;
}
