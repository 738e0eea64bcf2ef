import assert from "node:assert/strict";
import { XtermEngine } from "../pane/xterm_engine.ts";
import { rng } from "../../../tests/_prng.ts";
import { snapshotJson, snapshotOf, SnapshotRows, textsOfEncoded } from "./snapshot.ts";

const PIXELS = { width: 0, height: 0 };

function parse(term: XtermEngine, data: string) {
  term.parseNow!(new TextEncoder().encode(data));
}

/** A snapshot that reuses the last one's rows is the snapshot built from scratch. */
function same(term: XtermEngine, kept: SnapshotRows, seq: number) {
  const fresh = JSON.stringify(snapshotOf(term, seq, "t", PIXELS));
  assert.equal(snapshotJson(term, seq, "t", PIXELS, kept), fresh);
  assert.equal(snapshotJson(term, seq, "t", PIXELS), fresh);
}

Deno.test("snapshots reuse unchanged and scrolled rows and still equal a full build", () => {
  // 12 rows and later 105: renumbered rows cross 9/10 and 99/100.
  const term = new XtermEngine({ cols: 20, rows: 12, scrollback: 50 });
  const kept = new SnapshotRows();
  const pieces = [
    "plain ",
    "\r\n",
    "\x1b[31mred\x1b[0m ",
    "\x1b[1;4;38;2;1;2;3;48;5;200mstyled\x1b[0m",
    "宽字",
    "e\u0301", // a combined cell
    "👍🏽",
    '"quote\\back"',
    "\x1b[H",
    "\x1b[2J",
    "\x1b[3;5H",
    "\x1b[K",
    "\x1b[?1049h",
    "\x1b[?1049l",
    "\x1b[2L",
    "\x1b[M",
    "\tx",
    "0123456789012345678901234", // wraps
  ];
  const next = rng(14);
  same(term, kept, 0);
  for (let i = 1; i <= 500; i++) {
    let data = "";
    for (let n = Math.floor(next() * 4); n >= 0; n--) data += pieces[Math.floor(next() * pieces.length)];
    parse(term, data);
    if (i % 97 === 0) term.resize(15 + (i % 11), i === 291 ? 105 : 8 + (i % 7));
    same(term, kept, i);
  }
});

Deno.test("a scrolled screen reuses its rows under their new row numbers", () => {
  const term = new XtermEngine({ cols: 10, rows: 3, scrollback: 1000 });
  const kept = new SnapshotRows();
  parse(term, "a\r\nb\r\nc");
  same(term, kept, 1);
  parse(term, "\r\nd");
  const cells = JSON.parse(snapshotJson(term, 2, null, PIXELS, kept)).cells;
  assert.deepEqual(
    cells.filter((c: { col: number }) => c.col === 0).map((
      c: { row: number; text: string },
    ) => [c.row, c.text]),
    [
      [0, "b"],
      [1, "c"],
      [2, "d"],
    ],
  );
});

Deno.test("textsOfEncoded reads plain text and title without the cells, whatever the cells hold", () => {
  const term = new XtermEngine({ cols: 30, rows: 4, scrollback: 1000 });
  parse(term, 'a "],"alternate_screen":x\r\n,"cells":[ \\ 宽\r\ntoken=abc');
  for (const title of ['t"itle', null]) {
    const json = snapshotJson(term, 3, title, PIXELS);
    const snap = JSON.parse(json);
    assert.deepEqual(textsOfEncoded(json), { plain_text: snap.plain_text, title: snap.title });
  }
});
