import assert from "node:assert/strict";
import xterm from "@xterm/headless";
import { Scrollback, stagingRows } from "./scrollback.ts";
import { lineText, RowStore } from "./row_store.ts";
import { lineHash, textHash } from "./row_hash.ts";
import { changedSince, readLines, searchLines, takeSnapshot } from "./screen.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

function term(cols: number, rows: number, scrollback: number) {
  return new xterm.Terminal({ cols, rows, scrollback, allowProposedApi: true, logLevel: "off" });
}

/** Parses synchronously, as the pane worker does. */
function feed(t: xterm.Terminal, data: string, sb?: Scrollback | null) {
  (t as Any)._core._writeBuffer.writeSync(data);
  sb?.afterParse();
}

/** A terminal with the compact scrollback and a plain one to compare with. */
function pair(cols: number, rows: number, total: number) {
  const small = term(cols, rows, stagingRows(total));
  const sb = Scrollback.attach(small, total)!;
  const ref = term(cols, rows, total);
  return { small, sb, ref, feed: (d: string) => (feed(small, d, sb), feed(ref, d)) };
}

function rows(buf: Any): string[] {
  return readLines(buf, 1_000_000, 0).lines;
}

Deno.test("lineText reads cells like translateToString(true)", () => {
  const t = term(40, 5, 0);
  const samples = [
    "plain ascii text",
    "\x1b[1;31mred\x1b[0m and \x1b[38;2;1;2;3mtrue colour\x1b[0m",
    "wide 漢字テスト and 한국어 mixed",
    "emoji 😀 and e\u0301 combining",
    "trailing spaces   ",
    "########\x1b[8Doverwrite",
    "",
    "x".repeat(40),
  ];
  feed(t, samples.join("\r\n"));
  const buf = (t as Any)._core.buffers.normal;
  for (let y = 0; y < samples.length - 3; y++) {
    const line = buf.lines.get(y);
    assert.deepEqual(lineText(line), line.translateToString(true), `row ${y}`);
  }
});

Deno.test("RowStore is a ring that reports what fell off", () => {
  const s = new RowStore(3);
  assert.deepEqual([s.push("a", false), s.push("b", true), s.push("c", false)], [0, 0, 0]);
  assert.deepEqual(s.push("d", false), 1);
  assert.deepEqual([s.text(0), s.text(1), s.text(2), s.wrapped(0)], ["b", "c", "d", true]);
  assert.deepEqual(s.clear(), 3);
  assert.deepEqual(new RowStore(0).push("x", false), 1);
  assert.deepEqual([s.push("e", false), s.length, s.text(0)], [0, 1, "e"]);
});

Deno.test("RowStore's slots grow with its rows, and clear() shrinks them, keeping order, flags and hashes", () => {
  const store = new RowStore(1000);
  const rows: [string, boolean][] = [];
  const check = () => {
    const kept = rows.slice(-1000);
    assert.equal(store.length, kept.length);
    for (const i of [0, 1, kept.length >> 1, kept.length - 2, kept.length - 1].filter((i) => i >= 0)) {
      assert.equal(store.text(i), kept[i][0]);
      assert.equal(store.wrapped(i), kept[i][1]);
      assert.equal(store.hash(i), textHash(kept[i][0]));
    }
  };
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 2500; i++) {
      const row: [string, boolean] = [i % 7 ? `row ${round}.${i}` : `wide ${i} \u2500\u4e2d`, i % 3 === 0];
      rows.push(row);
      const dropped = store.push(...row);
      assert.equal(dropped, rows.length > 1000 ? 1 : 0);
      // Hashes asked for while the ring is still growing must move with their rows.
      if (i === 200 || i === 700) check();
    }
    check();
    assert.equal(store.clear(), 1000);
    rows.length = 0;
  }
});

Deno.test("compact scrollback reads exactly like xterm's own", () => {
  const { small, sb, ref, feed } = pair(30, 10, 1000);
  let refTrimmed = 0;
  (ref as Any)._core.buffers.normal.lines.onTrim((n: number) => (refTrimmed += n));
  let text = "";
  for (let i = 1; i <= 3000; i++) {
    text += `${i} ${"abc ".repeat(i % 13)}${i % 7 === 0 ? "漢字" : ""}\r\n`;
    if (i % 100 === 0) text += "a long line that wraps over more than one row of thirty columns\r\n";
  }
  feed(text);
  const got = sb.buffer(small.buffer.active);
  assert.deepEqual(got.length, ref.buffer.active.length);
  assert.deepEqual(rows(got), rows(ref.buffer.active));
  assert.deepEqual(readLines(got, 50, 100), readLines(ref.buffer.active, 50, 100));
  assert.deepEqual(searchLines(got, "WRAPS over", 5), searchLines(ref.buffer.active, "wraps over", 5));
  assert.deepEqual(sb.trimmed, refTrimmed);
});

Deno.test("compact scrollback: Latin-1 bytes and other rows mixed, past arena growth and wrap-around", () => {
  const { small, sb, ref, feed } = pair(120, 8, 700);
  const symbols = ["é", "─", "✓", "→", "€", "日本", "ß", "\t", "e\u0301"];
  let text = "";
  for (let i = 1; i <= 6000; i++) {
    const width = (i * 37) % 300; // blank rows, short rows, rows wrapping once or twice
    let line = `${i}:`;
    while (line.length < width) line += ` w${(i * 7 + line.length) % 1000}`;
    if (i % 5 === 0) line += ` ${symbols[i % symbols.length]} end`;
    if (i % 11 === 0) line = `\x1b[1;31m${line}\x1b[0m  `; // SGR, written trailing spaces
    text += `${line}\r\n`;
    if (i % 500 === 0) {
      feed(text);
      text = "";
      assert.deepEqual(rows(sb.buffer(small.buffer.active)), rows(ref.buffer.active), `after ${i} lines`);
    }
  }
  const got = sb.buffer(small.buffer.active);
  for (let y = 0; y < got.length; y++) {
    assert.deepEqual(got.getLine(y)?.isWrapped, ref.buffer.active.getLine(y)?.isWrapped, `wrap flag ${y}`);
  }
});

Deno.test("rows scrolled out of a scroll region at the top are kept", () => {
  const { small, sb, ref, feed } = pair(20, 6, 300);
  feed("\x1b[1;5r\x1b[5;1H"); // region rows 1-5, status row 6 stays
  for (let i = 1; i <= 600; i++) feed(`line ${i}\r\n`);
  assert.deepEqual(rows(sb.buffer(small.buffer.active)), rows(ref.buffer.active));
});

Deno.test("ED 3 and RIS erase the compact scrollback too", () => {
  const { small, sb, ref, feed } = pair(20, 5, 500);
  for (let i = 1; i <= 400; i++) feed(`line ${i}\r\n`);
  feed("\x1b[3J");
  assert.deepEqual(rows(sb.buffer(small.buffer.active)), rows(ref.buffer.active));
  for (let i = 1; i <= 400; i++) feed(`again ${i}\r\n`);
  feed("\x1bc");
  feed("fresh\r\n");
  assert.deepEqual(rows(sb.buffer(small.buffer.active)), ["fresh"]);
  for (let i = 1; i <= 300; i++) feed(`after ${i}\r\n`);
  assert.deepEqual(rows(sb.buffer(small.buffer.active)), rows(ref.buffer.active));
});

Deno.test("rows that scroll out after ED 3 in the same chunk are history", () => {
  for (const before of [400, 2]) { // with rows above the screen to erase, and with none
    const { small, sb, ref, feed } = pair(20, 5, 500);
    let text = "";
    for (let i = 1; i <= before; i++) text += `line ${i}\r\n`;
    text += "\x1b[H\x1b[2J\x1b[3J";
    for (let i = 1; i <= 300; i++) text += `after ${i}\r\n`;
    feed(text);
    assert.deepEqual(rows(sb.buffer(small.buffer.active)), rows(ref.buffer.active), `${before} rows before`);
  }
});

Deno.test("the alternate screen shows alone; ED 3 there keeps the history", () => {
  const { small, sb, ref, feed } = pair(20, 5, 500);
  for (let i = 1; i <= 300; i++) feed(`line ${i}\r\n`);
  const normalRows = () => (small as Any)._core.buffers.normal.lines.length;
  assert.deepEqual(normalRows(), 5 + stagingRows(500));
  feed("\x1b[?1049h\x1b[Hfull screen app\x1b[3J");
  assert.deepEqual(rows(sb.buffer(small.buffer.active)), ["full screen app"]);
  // The normal screen's staging rows wait in the store meanwhile.
  assert.deepEqual(normalRows(), 5);
  feed("\x1b[?1049l");
  const back = rows(sb.buffer(small.buffer.active));
  assert.deepEqual(back[0], "line 1");
  assert.deepEqual(back.at(-1), "line 300");
  assert.deepEqual(back, rows(ref.buffer.active));
  for (let i = 301; i <= 400; i++) feed(`line ${i}\r\n`);
  assert.deepEqual(normalRows(), 5 + stagingRows(500));
  assert.deepEqual(rows(sb.buffer(small.buffer.active)), rows(ref.buffer.active));
});

Deno.test("a full-screen program's turn drops no history: the staging rows move only into room in the store", () => {
  for (const [total, lines, moved] of [[50, 300, 0], [150, 100, 46], [500, 1000, 0], [500, 200, 100]]) {
    const { small, sb, ref, feed } = pair(20, 5, total);
    for (let i = 1; i <= lines; i++) feed(`line ${i}\r\n`);
    const before = rows(ref.buffer.active);
    const above = () => (small as Any)._core.buffers.normal.lines.length - 5;
    const staged = above();
    feed("\x1b[?1049h\x1b[Hfull screen app");
    assert.deepEqual(staged - above(), moved, `total ${total}, ${lines} lines`);
    feed("\x1b[?1049l");
    assert.deepEqual(rows(sb.buffer(small.buffer.active)), before, `total ${total}, ${lines} lines`);
    for (let i = 1; i <= 150; i++) feed(`after ${i}\r\n`);
    assert.deepEqual(rows(sb.buffer(small.buffer.active)), rows(ref.buffer.active));
  }
});

Deno.test("narrowing a pane keeps every row (the store's rows are not reflowed)", () => {
  const { small, sb, feed } = pair(40, 10, 2000);
  for (let i = 1; i <= 1000; i++) feed(`row ${i} ${"x".repeat(25)}\r\n`);
  sb.resize(small, () => small.resize(15, 10));
  const text = rows(sb.buffer(small.buffer.active)).join("\n");
  for (const i of [1, 500, 890, 950, 999, 1000]) {
    assert.deepEqual(text.includes(`row ${i} `), true, `row ${i} kept`);
  }
  assert.deepEqual(small.options.scrollback, stagingRows(2000));
});

Deno.test("RowStore.pushLine keeps every kind of row as translateToString(true) reads it", () => {
  const t = term(40, 4, 0);
  const samples = [
    "plain ascii",
    "latin-1 éàü ß ÿ and ¿¡",
    "\x1b[1;31mred\x1b[0m \x1b[41m   \x1b[0m bg-erased tail\x1b[K",
    "wide 漢字テスト 한국어",
    "emoji 😀 astral 𝒳 end",
    "combining e\u0301 a\u0300\u0301\u0302",
    "tab\tstop\tgap",
    "########\x1b[8Doverwrite",
    "漢".repeat(20),
    "x".repeat(40),
    "",
    "   spaces written   ",
  ];
  const store = new RowStore(100);
  const want: string[] = [];
  // Past the arena's first size, so rows land after growths and skips at its end.
  for (let i = 0; i < 2000; i++) {
    feed(t, `\x1b[2J\x1b[H${samples[i % samples.length]}${i < samples.length ? "" : ` ${i}`}`);
    const line = (t as Any)._core.buffers.normal.lines.get(0);
    want.push(line.translateToString(true));
    store.pushLine(line);
    if (i === samples.length - 1) {
      assert.deepEqual(Array.from({ length: store.length }, (_, i) => store.text(i)), want);
    }
  }
  assert.deepEqual(Array.from({ length: store.length }, (_, i) => store.text(i)), want.slice(-100));
  // The hashes `read --since` compares: the same from bytes, cells and text.
  for (let i = 0; i < store.length; i++) {
    assert.deepEqual(store.hash(i), textHash(store.text(i)), `store row ${i}`);
    assert.deepEqual(store.hash(i), store.hash(i), `cached store row ${i}`);
  }
  for (const s of [...samples, "trailing spaces    ", "\x1b[44m  \x1b[0m", "x \x1b[5C \x1b[3C"]) {
    feed(t, `\x1b[2J\x1b[H${s}`);
    const line = (t as Any)._core.buffers.normal.lines.get(0);
    assert.deepEqual(lineHash(line), textHash(line.translateToString(true)), JSON.stringify(s));
  }
  assert.notDeepEqual(textHash("ab"), textHash("ba"));
  assert.deepEqual(textHash("ab  "), textHash("ab"));
});

Deno.test("read --since: hashes from bytes, cells and the staging cache report what the rows' text does", () => {
  const { small, sb, feed } = pair(30, 6, 400);
  const fast = () => sb.buffer(small.buffer.active);
  // The same rows seen only as text: every hash made from a string.
  const slow = () => {
    const b = fast();
    return {
      type: b.type,
      length: b.length,
      baseY: b.baseY,
      cursorY: b.cursorY,
      cursorX: b.cursorX,
      getLine: (y: number) => {
        const line = b.getLine(y);
        return line && { isWrapped: line.isWrapped, translateToString: () => line.translateToString(true) };
      },
    };
  };
  let snapFast = takeSnapshot(fast(), 0, sb.trimmed, 6);
  let snapSlow = takeSnapshot(slow(), 0, sb.trimmed, 6);
  const step = (what: string, act: () => void) => {
    act();
    const got = changedSince(fast(), sb.trimmed, snapFast, 10_000);
    assert.deepEqual(got, changedSince(slow(), sb.trimmed, snapSlow, 10_000), what);
    snapFast = takeSnapshot(fast(), 0, sb.trimmed, 6);
    snapSlow = takeSnapshot(slow(), 0, sb.trimmed, 6);
    assert.deepEqual(snapFast, snapSlow, `${what}: snapshot`);
    return got;
  };
  step("first rows", () => {
    for (let i = 1; i <= 200; i++) feed(`row ${i} ${"é─漢"[i % 3]} ${"x".repeat(i % 45)}\r\n`);
  });
  assert.deepEqual(step("one more", () => feed("one more\r\n")).changed.length, 1);
  step("rewritten on screen", () => feed("\x1b[3Arewritten on screen\x1b[3B\r\n"));
  step("flood", () => {
    for (let i = 1; i <= 150; i++) feed(`flood ${i}\r\n`);
  });
  assert.deepEqual(step("nothing", () => feed("")).changed, []);
  step("narrower", () => sb.resize(small, () => small.resize(20, 6)));
  step("after the resize", () => feed("after the resize\r\n"));
  step("wider", () => sb.resize(small, () => small.resize(50, 6)));
  step("ED 3", () => feed("\x1b[3J"));
  step("RIS", () => feed("\x1bcfresh\r\n"));
  step("after RIS", () => {
    for (let i = 1; i <= 300; i++) feed(`again ${i}\r\n`);
  });
});
