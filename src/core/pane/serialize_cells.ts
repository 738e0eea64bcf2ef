/**
 * A screen as ANSI from the engine interface's cells (./engine.ts): what an
 * engine without a serializer of its own gives `surface.screen`. Each row's
 * cells are written with the SGR of their style (reset, then the
 * attributes: a style is written whole when it changes), blank cells at the
 * end of a row with default colours are left out, and the cursor and modes
 * are put back at the end, as @xterm/addon-serialize does.
 *
 * @module
 */
import type { EngineBuffer, EngineCell, EngineLine, EngineModes } from "./engine.ts";

function colourSgr(fg: boolean, c: EngineCell): string {
  const isDefault = fg ? c.isFgDefault() : c.isBgDefault();
  if (isDefault) return "";
  const v = fg ? c.getFgColor() : c.getBgColor();
  if (fg ? c.isFgRGB() : c.isBgRGB()) {
    return `;${fg ? 38 : 48};2;${(v >> 16) & 255};${(v >> 8) & 255};${v & 255}`;
  }
  if (v < 16) return `;${(fg ? 30 : 40) + (v & 8 ? 60 : 0) + (v & 7)}`;
  return `;${fg ? 38 : 48};5;${v}`;
}

/** The SGR that sets exactly `c`'s style from any other. */
export function styleSgr(c: EngineCell): string {
  let s = "\x1b[0";
  if (c.isBold()) s += ";1";
  if (c.isDim()) s += ";2";
  if (c.isItalic()) s += ";3";
  if (c.isUnderline()) s += ";4";
  if (c.isBlink()) s += ";5";
  if (c.isInverse()) s += ";7";
  if (c.isInvisible()) s += ";8";
  if (c.isStrikethrough()) s += ";9";
  return s + colourSgr(true, c) + colourSgr(false, c) + "m";
}

const RESET = "\x1b[0m";

const blank = (c: EngineCell) => c.getChars() === "" && c.isBgDefault() && !c.isInverse();

/** Row `line` as text with its styles; `pen` is the SGR in effect before it, updated. */
function rowAnsi(line: EngineLine | undefined, cols: number, pen: { sgr: string }): string {
  if (!line) return "";
  const cells: EngineCell[] = [];
  for (let x = 0; x < cols; x++) {
    const c = line.getCell(x);
    if (c) cells.push(c);
  }
  let end = cells.length;
  while (end > 0 && blank(cells[end - 1])) end--;
  let out = "";
  for (let x = 0; x < end; x++) {
    const c = cells[x];
    if (c.getWidth() === 0) continue;
    const sgr = styleSgr(c);
    if (sgr !== pen.sgr) {
      out += sgr;
      pen.sgr = sgr;
    }
    out += c.getChars() || " ";
  }
  return out;
}

/** Rows `[from, to)` of `buf`, a row that wraps on joined to the next. */
function rowsAnsi(buf: EngineBuffer, from: number, to: number, cols: number): string {
  const pen = { sgr: RESET };
  let out = "";
  for (let y = from; y < to; y++) {
    const line = buf.getLine(y);
    out += rowAnsi(line, cols, pen);
    if (y + 1 < to) {
      const next = buf.getLine(y + 1);
      const full = line?.translateToString(true).length ?? 0;
      // A row that wraps on, filled to its last column: its text flows on by itself.
      if (!(next?.isWrapped && full >= cols)) {
        if (pen.sgr !== RESET) {
          out += RESET;
          pen.sgr = RESET;
        }
        out += "\r\n";
      }
    }
  }
  return out + (pen.sgr !== RESET ? RESET : "");
}

/** The modes a replaying terminal needs set, as @xterm/addon-serialize writes them. */
function modesAnsi(modes: EngineModes): string {
  return (modes.applicationCursor ? "\x1b[?1h" : "") + (modes.applicationKeypad ? "\x1b[?66h" : "") +
    (modes.bracketedPaste ? "\x1b[?2004h" : "");
}

/**
 * `buf` (the active screen) with up to `scrollback` rows above it, the
 * cursor where it is and the modes; the alternate screen is entered first
 * when it is active.
 */
export function serializeCells(
  buf: EngineBuffer,
  size: { cols: number; rows: number },
  modes: EngineModes,
  scrollback: number,
): { ansi: string; scrollback: number } {
  const alternate = buf.type === "alternate";
  const kept = alternate ? 0 : Math.min(scrollback, buf.baseY);
  const from = buf.baseY - kept;
  // Every row of the screen, blank ones too: the replaying terminal's screen is then exactly it.
  const last = buf.length - 1;
  let ansi = (alternate ? "\x1b[?1049h\x1b[H" : "") + rowsAnsi(buf, from, last + 1, size.cols);
  ansi += `\x1b[${buf.cursorY + 1};${buf.cursorX + 1}H` + modesAnsi(modes);
  return { ansi, scrollback: kept };
}
