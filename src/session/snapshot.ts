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

const styleJson = new Map<number, Map<number, string>>();
const styleJsonSlow = new Map<string, string>();

/**
 * A cell's style as JSON, cached per distinct style: keyed by xterm's packed
 * attribute words (`fg`, `bg`: colour, mode and flags) where the cell has
 * them, else by the values read through the public API.
 */
function styleJsonOf(c: BufferCell): string {
  const packed = c as unknown as { fg?: number; bg?: number };
  if (typeof packed.fg === "number" && typeof packed.bg === "number") {
    let row = styleJson.get(packed.fg);
    if (!row) styleJson.set(packed.fg, row = new Map());
    let json = row.get(packed.bg);
    if (json === undefined) {
      json = JSON.stringify(styleOf(c));
      if (row.size < 1024) row.set(packed.bg, json);
    }
    return json;
  }
  const key =
    `${c.getFgColorMode()}:${c.getFgColor()}:${c.getBgColorMode()}:${c.getBgColor()}:${c.isBold()}${c.isDim()}${c.isItalic()}${c.isUnderline()}${c.isInverse()}`;
  let json = styleJsonSlow.get(key);
  if (json === undefined) {
    json = JSON.stringify(styleOf(c));
    if (styleJsonSlow.size < 4096) styleJsonSlow.set(key, json);
  }
  return json;
}

const DEFAULT_STYLE_JSON = JSON.stringify(DEFAULT_STYLE);
/** A cell's text that needs no JSON escaping (no quote, backslash or control character). */
function plain(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/**
 * The snapshot as JSON text, built directly: a full 24x80 snapshot is ~2,000
 * cell objects, and building them then serializing (or structured-cloning
 * them to the main thread) costs several times more than this.
 */
export function snapshotJson(
  term: Term,
  sequence: number,
  title: string | null,
  pixels: { width: number; height: number },
): string {
  const buf = term.buffer.active;
  const parts: string[] = [];
  let cell: BufferCell | undefined;
  for (let y = 0; y < term.rows; y++) {
    const line = buf.getLine(buf.baseY + y);
    for (let x = 0; x < term.cols; x++) {
      cell = line?.getCell(x, cell);
      if (!cell) {
        parts.push(
          `{"row":${y},"col":${x},"text":"","wide":false,"wide_continuation":false,"style":${DEFAULT_STYLE_JSON}}`,
        );
        continue;
      }
      const chars = cell.getChars();
      const width = cell.getWidth();
      parts.push(
        `{"row":${y},"col":${x},"text":${plain(chars) ? `"${chars}"` : JSON.stringify(chars)},"wide":${
          width === 2
        },"wide_continuation":${width === 0},"style":${styleJsonOf(cell)}}`,
      );
    }
  }
  const head = snapshotOf(term, sequence, title, pixels, false);
  const { cells: _cells, ...rest } = head;
  const json = JSON.stringify(rest);
  // `cells` goes where ptywright puts it: after plain_text.
  return json.replace(/,"alternate_screen":/, `,"cells":[${parts.join(",")}],"alternate_screen":`);
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
