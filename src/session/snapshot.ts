/**
 * ptywright's ScreenSnapshot from a headless xterm (runs in the pane
 * worker): size, cursor, plain text of the visible rows (vt100's
 * `contents()`: rows trimmed, a wrapped row joined to the next, trailing
 * blank rows dropped), every cell with its text, width and style, and the
 * terminal's modes and title.
 *
 * @module
 */
import type xterm from "@xterm/headless";
import type { Cell, CellStyle, ScreenSnapshot } from "./_protocol.ts";

type Term = xterm.Terminal;
type BufferCell = xterm.IBufferCell;

const DEFAULT_STYLE: CellStyle = Object.freeze({
  foreground: "default",
  background: "default",
  bold: false,
  dim: false,
  italic: false,
  underline: false,
  inverse: false,
}) as CellStyle;

function colour(isDefault: boolean, isRgb: boolean, value: number): string {
  if (isDefault) return "default";
  if (isRgb) return `rgb:${(value >> 16) & 255}:${(value >> 8) & 255}:${value & 255}`;
  return `idx:${value}`;
}

function styleOf(c: BufferCell): CellStyle {
  const plain = c.isFgDefault() && c.isBgDefault() && !c.isBold() && !c.isDim() && !c.isItalic() &&
    !c.isUnderline() && !c.isInverse();
  if (plain) return DEFAULT_STYLE;
  return {
    foreground: colour(c.isFgDefault(), c.isFgRGB(), c.getFgColor()),
    background: colour(c.isBgDefault(), c.isBgRGB(), c.getBgColor()),
    bold: c.isBold() !== 0,
    dim: c.isDim() !== 0,
    italic: c.isItalic() !== 0,
    underline: c.isUnderline() !== 0,
    inverse: c.isInverse() !== 0,
  };
}

/** The visible rows as vt100's `contents()` gives them. */
export function plainText(term: Term): string {
  const buf = term.buffer.active;
  let out = "";
  for (let y = 0; y < term.rows; y++) {
    const line = buf.getLine(buf.baseY + y);
    const wraps = buf.getLine(buf.baseY + y + 1)?.isWrapped === true && y + 1 < term.rows;
    const text = line?.translateToString(!wraps) ?? "";
    out += wraps ? text : text.replace(/ +$/, "") + "\n";
  }
  return out.replace(/\n+$/, "");
}

/** Cursor position in the visible rows and whether it is shown (DECTCEM). */
export function cursorOf(term: Term): { row: number; col: number; visible: boolean } {
  const buf = term.buffer.active;
  // deno-lint-ignore no-explicit-any
  const hidden = (term as any)._core?.coreService?.isCursorHidden === true;
  return { row: buf.cursorY, col: Math.min(buf.cursorX, term.cols - 1), visible: !hidden };
}

/** A full snapshot. */
export function snapshotOf(
  term: Term,
  sequence: number,
  title: string | null,
  pixels: { width: number; height: number },
  withCells = true,
): ScreenSnapshot {
  const buf = term.buffer.active;
  const cells: Cell[] = [];
  if (withCells) {
    let cell: BufferCell | undefined;
    for (let y = 0; y < term.rows; y++) {
      const line = buf.getLine(buf.baseY + y);
      for (let x = 0; x < term.cols; x++) {
        cell = line?.getCell(x, cell);
        if (!cell) {
          cells.push({
            row: y,
            col: x,
            text: "",
            wide: false,
            wide_continuation: false,
            style: DEFAULT_STYLE,
          });
          continue;
        }
        const width = cell.getWidth();
        cells.push({
          row: y,
          col: x,
          text: cell.getChars(),
          wide: width === 2,
          wide_continuation: width === 0,
          style: styleOf(cell),
        });
      }
    }
  }
  return {
    size: { rows: term.rows, cols: term.cols, pixel_width: pixels.width, pixel_height: pixels.height },
    cursor: cursorOf(term),
    sequence,
    plain_text: plainText(term),
    cells,
    alternate_screen: buf.type === "alternate",
    application_cursor: term.modes.applicationCursorKeysMode,
    application_keypad: term.modes.applicationKeypadMode,
    title,
  };
}
