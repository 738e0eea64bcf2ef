/**
 * The xterm.js engine: @xterm/headless (./terminal.ts) with the compact
 * scrollback (./scrollback.ts), jump scroll (./fast_forward.ts) and
 * @xterm/addon-serialize for the screen a client replays. xterm's own
 * buffer, lines and cells are handed out as they are.
 *
 * @module
 */
import { SerializeAddon } from "@xterm/addon-serialize";
import type xterm from "@xterm/headless";
import type { EngineBuffer, EngineModes, EngineSize, PaneEngine } from "./engine.ts";
import type { BufferLike } from "./screen.ts";
import type { Scrollback } from "./scrollback.ts";
import { createTerminal } from "./terminal.ts";
import { FastForward } from "./fast_forward.ts";

/** A pane's xterm, behind the engine interface. */
export class XtermEngine implements PaneEngine {
  readonly kind = "xterm" as const;
  readonly term: xterm.Terminal;
  /** The compact scrollback; null when xterm keeps all of it. */
  readonly scrollback: Scrollback | null;
  readonly parseNow: ((data: Uint8Array) => void) | null;
  readonly jump: FastForward | null;
  #trimmed = 0;
  #serializer: SerializeAddon | null = null;

  constructor(size: EngineSize) {
    const t = createTerminal(size.cols, size.rows, size.scrollback);
    this.term = t.term;
    this.scrollback = t.scrollback;
    this.parseNow = t.parseNow;
    this.jump = FastForward.attach(t.term, t.scrollback, t.parseNow);
    if (!t.scrollback) t.onTrim((n) => (this.#trimmed += n));
  }

  get cols(): number {
    return this.term.cols;
  }
  get rows(): number {
    return this.term.rows;
  }
  get active(): EngineBuffer {
    return this.term.buffer.active as unknown as EngineBuffer;
  }
  get trimmed(): number {
    if (this.term.buffer.active.type !== "normal") return 0;
    return this.scrollback ? this.scrollback.trimmed : this.#trimmed;
  }

  reads(): BufferLike & { readonly type: string } {
    const active = this.term.buffer.active;
    return (this.scrollback ? this.scrollback.buffer(active) : active) as BufferLike & {
      readonly type: string;
    };
  }

  olderRows(n: number): string[] {
    if (!this.scrollback) return [];
    const all = this.reads();
    const stored = all.length - this.term.buffer.normal.length;
    const rows: string[] = [];
    for (let y = Math.max(0, stored - n); y < stored; y++) {
      rows.push(all.getLine(y)?.translateToString(true) ?? "");
    }
    return rows;
  }

  modes(): EngineModes {
    const m = this.term.modes;
    return {
      bracketedPaste: m.bracketedPasteMode,
      applicationCursor: m.applicationCursorKeysMode,
      applicationKeypad: m.applicationKeypadMode,
      // deno-lint-ignore no-explicit-any
      cursorHidden: (this.term as any)._core?.coreService?.isCursorHidden === true,
    };
  }

  afterParse(): void {
    this.scrollback?.afterParse();
  }

  write(data: Uint8Array | string, done?: () => void): void {
    this.term.write(data, done);
  }

  resize(cols: number, rows: number): void {
    if (this.scrollback) this.scrollback.resize(this.term, () => this.term.resize(cols, rows));
    else this.term.resize(cols, rows);
  }

  serialize(scrollback: number): { ansi: string; scrollback: number } {
    // It serializes the normal screen too while the alternate one is active.
    const run = () => this.#serialize(scrollback);
    return this.scrollback ? this.scrollback.withNormalRows(this.term, run) : run();
  }

  /**
   * Rows older than xterm's own buffer come from the compact scrollback as
   * plain text (it keeps no colours); they are put first.
   */
  #serialize(scrollback: number): { ansi: string; scrollback: number } {
    if (!this.#serializer) {
      this.#serializer = new SerializeAddon();
      // The addon is typed against @xterm/xterm's Terminal; it uses only what headless has too.
      this.term.loadAddon(this.#serializer as unknown as xterm.ITerminalAddon);
    }
    const buf = this.term.buffer.active;
    const alternate = buf.type === "alternate";
    const own = alternate ? 0 : Math.min(scrollback, buf.baseY);
    let ansi = this.#serializer.serialize({ scrollback: own, excludeAltBuffer: false });
    let kept = own;
    const extra = scrollback - own;
    if (!alternate && extra > 0 && own === buf.baseY) {
      const rows = this.olderRows(extra);
      if (rows.length) {
        // Plain rows, then a reset so no attribute leaks, then the coloured part.
        ansi = rows.map(printable).join("\r\n") + "\r\n\x1b[0m" + ansi;
        kept += rows.length;
      }
    }
    return { ansi, scrollback: kept };
  }

  onTitle(fn: (title: string) => void): void {
    this.term.onTitleChange(fn);
  }

  onReply(fn: (data: string) => void): void {
    this.term.onData(fn);
  }

  dispose(): void {
    this.term.dispose();
  }
}

/** A stored row as it may be replayed: a control character (none should be there) becomes a space. */
export function printable(row: string): string {
  let out = "";
  for (const ch of row) {
    const c = ch.charCodeAt(0);
    out += c < 0x20 || c === 0x7f ? " " : ch;
  }
  return out;
}
