import assert from "node:assert/strict";
import xterm from "@xterm/headless";
import { SerializeAddon } from "@xterm/addon-serialize";
import { Scrollback, stagingRows } from "./scrollback.ts";
import { readLines } from "./screen.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

function term(cols: number, rows: number, scrollback: number) {
  const t = new xterm.Terminal({ cols, rows, scrollback, allowProposedApi: true, logLevel: "off" });
  const addon = new SerializeAddon();
  t.loadAddon(addon as unknown as xterm.ITerminalAddon);
  return { t, serialize: () => addon.serialize({ scrollback: 0, excludeAltBuffer: false }) };
}

/** The bytes of the normal screen's rows (their `Uint32Array`s). */
function normalBytes(t: xterm.Terminal): number {
  const lines = (t as Any)._core.buffers.normal.lines;
  let n = 0;
  for (let y = 0; y < lines.length; y++) n += lines.get(y)._data.byteLength;
  return n;
}

/** A terminal with the compact scrollback and a plain one, fed the same bytes. */
function pair(cols: number, rows: number, total: number) {
  const small = term(cols, rows, stagingRows(total));
  const sb = Scrollback.attach(small.t, total)!;
  const ref = term(cols, rows, total);
  const feed = (d: string) => {
    (small.t as Any)._core._writeBuffer.writeSync(d);
    sb.afterParse();
    (ref.t as Any)._core._writeBuffer.writeSync(d);
  };
  const same = (what: string) => {
    assert.deepEqual(
      sb.withNormalRows(small.t, small.serialize),
      ref.serialize(),
      `${what}: both screens, cell for cell`,
    );
    assert.deepEqual(
      readLines(sb.buffer(small.t.buffer.active), 1_000_000, 0).lines,
      readLines(ref.t.buffer.active, 1_000_000, 0).lines,
      `${what}: the text`,
    );
  };
  return { small, sb, ref, feed, same };
}

/** A normal screen with every kind of row a cut could get wrong. */
const SCREEN = [
  "plain",
  "\x1b[1;31mred\x1b[0m and \x1b[38;2;1;2;3mtrue colour\x1b[0m",
  "\x1b[41m\x1b[Kred to the end of the row\x1b[0m",
  "wide 漢字 and e\u0301 combined",
  "written spaces   ",
  "w".repeat(50) + " wrapped",
  "tab\there",
  "$ app",
].join("\r\n");

Deno.test("the normal screen's rows are cut while the alternate screen is active, and come back the same", () => {
  const { small, sb, ref, feed, same } = pair(40, 12, 500);
  for (let i = 1; i <= 200; i++) feed(`line ${i}\r\n`);
  feed(SCREEN);
  same("before");
  const whole = normalBytes(ref.t) / ref.t.buffer.normal.length * small.t.rows;
  feed("\x1b[?1049h\x1b[Hfull screen app");
  // Blank rows and short ones are cut; the row erased in red and the long ones are not.
  assert.ok(normalBytes(small.t) < whole / 2, `${normalBytes(small.t)} of ${whole} bytes kept`);
  same("in the alternate screen");
  // A resize grows them back for xterm's reflow, and cuts them again at the new width.
  sb.resize(small.t, () => small.t.resize(30, 12));
  ref.t.resize(30, 12);
  assert.ok(normalBytes(small.t) < whole / 2);
  same("resized in the alternate screen");
  feed("\x1b[?1049l");
  same("back on the normal screen");
  for (let i = 1; i <= 30; i++) feed(`after ${i}\r\n`);
  same("after more output");
});

Deno.test("a full reset in the alternate screen leaves no cut row behind", () => {
  const { feed, same } = pair(40, 8, 300);
  feed(SCREEN);
  feed("\x1b[?1049h\x1b[Hfull screen app\x1bc");
  same("after RIS");
  feed("back\r\n\x1b[?1049h\x1b[?1049l");
  same("after another round trip");
});
