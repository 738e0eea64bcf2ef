import assert from "node:assert/strict";
import { GhosttyEngine, OscScanner, prepareGhostty } from "./ghostty_engine.ts";
import { readLines, readLogicalLines } from "./screen.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

async function engine(cols = 20, rows = 4, scrollback = 100): Promise<GhosttyEngine> {
  await prepareGhostty();
  return new GhosttyEngine({ cols, rows, scrollback });
}

Deno.test("OscScanner: titles of OSC 0 and 2, ended by BEL or ST, cut anywhere across chunks", () => {
  const stream =
    "a\x1b]0;first\x07b\x1b]2;sé cond\x1b\\c\x1b]1;icon\x07\x1b]8;;http://x\x07d\x1b[31m\x1b]0;last\x07";
  const whole: string[] = [];
  new OscScanner().scan(bytes(stream), (t) => whole.push(t));
  assert.deepEqual(whole, ["first", "sé cond", "last"]);
  const data = bytes(stream);
  for (let cut = 1; cut < data.length; cut++) {
    const got: string[] = [];
    const s = new OscScanner();
    s.scan(data.subarray(0, cut), (t) => got.push(t));
    s.scan(data.subarray(cut), (t) => got.push(t));
    assert.deepEqual(got, whole, `cut at ${cut}`);
  }
});

Deno.test("ghostty engine: text, colours, modes, title and replies through the engine interface", async () => {
  const e = await engine();
  const titles: string[] = [];
  const replies: string[] = [];
  e.onTitle((t) => titles.push(t));
  e.onReply((r) => replies.push(r));
  e.parseNow(
    bytes("\x1b]2;t\x07\x1b[1;31mred\x1b[0m \x1b[38;2;9;8;7mtc\x1b[0m 宽\x1b[?2004h\x1b[?25l\x1b[6n"),
  );
  const line = e.active.getLine(0)!;
  const red = line.getCell(0)!;
  assert.deepEqual([red.getChars(), red.isFgPalette(), red.getFgColor(), !!red.isBold()], [
    "r",
    true,
    1,
    true,
  ]);
  const tc = line.getCell(4)!;
  assert.deepEqual([tc.isFgRGB(), tc.getFgColor()], [true, 0x090807]);
  assert.ok(line.getCell(2)!.isBgDefault() && line.getCell(3)!.isFgDefault());
  assert.deepEqual([line.getCell(7)!.getWidth(), line.getCell(8)!.getWidth()], [2, 0]);
  assert.equal(line.translateToString(true), "red tc 宽");
  assert.deepEqual(e.modes(), {
    bracketedPaste: true,
    applicationCursor: false,
    applicationKeypad: false,
    cursorHidden: true,
  });
  assert.deepEqual(titles, ["t"]);
  assert.deepEqual(replies, ["\x1b[1;10R"]);
  e.dispose();
});

Deno.test("ghostty engine: history reads as one buffer with the screen, bounded by the pane's scrollback", async () => {
  const e = await engine(10, 3, 5);
  e.parseNow(bytes(Array.from({ length: 20 }, (_, i) => `row ${i}`).join("\r\n")));
  const r = readLines(e.reads(), 100, 0);
  assert.deepEqual(r.lines, ["row 12", "row 13", "row 14", "row 15", "row 16", "row 17", "row 18", "row 19"]);
  e.parseNow(bytes("\r\n0123456789abc"));
  assert.equal(readLogicalLines(e.reads(), 1, 0).lines[0], "0123456789abc");
  e.dispose();
});

Deno.test("ghostty engine: a wide character that does not fit leaves an empty cell of width 1, as xterm's", async () => {
  const e = await engine(5, 3);
  e.parseNow(bytes("abcd宽"));
  const c = e.active.getLine(0)!.getCell(4)!;
  assert.deepEqual([c.getChars(), c.getWidth()], ["", 1]);
  assert.equal(e.active.getLine(1)!.translateToString(true), "宽");
  e.dispose();
});

Deno.test("ghostty engine: closing a pane that printed grapheme clusters leaves the next pane's parsing whole", async () => {
  for (let round = 0; round < 4; round++) {
    const e = await engine(12, 4);
    e.parseNow(bytes("👍🏽 🇫🇷 👩\u200d💻 e\u0301\r\n"));
    assert.equal(e.faults, 0, `round ${round}`);
    assert.equal(e.active.getLine(0)!.translateToString(true), "👍🏽 🇫🇷 👩\u200d💻 e\u0301");
    e.dispose();
  }
});

Deno.test("ghostty engine: the screen serializes into ANSI that replays into the same cells", async () => {
  const a = await engine(16, 4, 10);
  a.parseNow(
    bytes(
      "hist 1\r\nhist 2\r\n\x1b[4;44mblue\x1b[0m 宽字 \x1b[91mbright\x1b[0m\r\n0123456789abcdefXY\r\nlast",
    ),
  );
  const { ansi, scrollback } = a.serialize(10);
  const b = await engine(16, 4, 10);
  b.parseNow(bytes(ansi));
  assert.equal(scrollback, a.active.baseY);
  for (let y = 0; y < a.active.length; y++) {
    const la = a.active.getLine(y)!, lb = b.active.getLine(y)!;
    assert.equal(lb.translateToString(true), la.translateToString(true), `row ${y}`);
    for (let x = 0; x < 16; x++) {
      const ca = la.getCell(x)!, cb = lb.getCell(x)!;
      assert.deepEqual(
        [cb.getChars(), cb.getFgColor(), cb.getBgColor(), cb.isUnderline(), cb.getWidth()],
        [ca.getChars(), ca.getFgColor(), ca.getBgColor(), ca.isUnderline(), ca.getWidth()],
        `row ${y} col ${x}`,
      );
    }
  }
  assert.deepEqual([b.active.cursorX, b.active.cursorY], [a.active.cursorX, a.active.cursorY]);
  a.dispose();
  b.dispose();
});
