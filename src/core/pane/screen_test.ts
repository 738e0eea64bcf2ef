import assert from "node:assert/strict";
import xterm from "@xterm/headless";
import {
  changedSince,
  contentRows,
  readLines,
  readLogicalLines,
  searchLines,
  snapshotModes,
  takeSnapshot,
} from "./screen.ts";

/** Runs `fn` on a fresh terminal that `data` has been written to (and parsed). */
async function withTerm(
  opts: { cols?: number; rows?: number; scrollback?: number },
  data: string,
  fn: (term: xterm.Terminal) => void | Promise<void>,
) {
  const term = new xterm.Terminal({
    cols: opts.cols ?? 20,
    rows: opts.rows ?? 5,
    scrollback: opts.scrollback ?? 100,
    allowProposedApi: true,
  });
  try {
    await write(term, data);
    await fn(term);
  } finally {
    term.dispose();
  }
}

function write(term: xterm.Terminal, data: string): Promise<void> {
  return new Promise((resolve) => term.write(data, resolve));
}

function lines(n: number, prefix = "line"): string {
  return Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`).join("\r\n");
}

Deno.test("contentRows: an empty terminal has none", async () => {
  await withTerm({}, "", (term) => {
    assert.equal(contentRows(term.buffer.active), 0);
    assert.deepEqual(readLines(term.buffer.active, 10, 0), {
      lines: [],
      total_lines: 0,
      eof: true,
      out_of_range: false,
    });
  });
});

Deno.test("contentRows: trailing blank rows are not counted, inner ones are", async () => {
  await withTerm({}, "a\r\n\r\nb\r\n\r\n\r\n", (term) => {
    assert.equal(contentRows(term.buffer.active), 3);
    assert.deepEqual(readLines(term.buffer.active, 10, 0).lines, ["a", "", "b"]);
  });
  await withTerm({}, "prompt$ ", (term) => {
    assert.equal(contentRows(term.buffer.active), 1);
    assert.deepEqual(readLines(term.buffer.active, 10, 0).lines, ["prompt$"]);
  });
});

Deno.test("contentRows: text below the cursor counts", async () => {
  // Write three rows, then move the cursor back to the top.
  await withTerm({}, "one\r\ntwo\r\nthree\x1b[H", (term) => {
    assert.equal(term.buffer.active.cursorY, 0);
    assert.equal(contentRows(term.buffer.active), 3);
    assert.deepEqual(readLines(term.buffer.active, 10, 0).lines, ["one", "two", "three"]);
  });
});

Deno.test("readLines: the newest lines, oldest first, across scrollback", async () => {
  await withTerm({ rows: 5 }, lines(12), (term) => {
    const buf = term.buffer.active;
    assert.equal(buf.baseY, 7);
    assert.deepEqual(readLines(buf, 3, 0), {
      lines: ["line10", "line11", "line12"],
      total_lines: 12,
      eof: false,
      out_of_range: false,
    });
    assert.deepEqual(readLines(buf, 100, 0), {
      lines: Array.from({ length: 12 }, (_, i) => `line${i + 1}`),
      total_lines: 12,
      eof: true,
      out_of_range: false,
    });
    assert.deepEqual(readLines(buf, 12, 0).eof, true);
    assert.deepEqual(readLines(buf, 11, 0).eof, false);
  });
});

Deno.test("readLines: offset counts back from the end", async () => {
  await withTerm({ rows: 5 }, lines(12), (term) => {
    const buf = term.buffer.active;
    assert.deepEqual(readLines(buf, 3, 2), {
      lines: ["line8", "line9", "line10"],
      total_lines: 12,
      eof: false,
      out_of_range: false,
    });
    assert.deepEqual(readLines(buf, 5, 9), {
      lines: ["line1", "line2", "line3"],
      total_lines: 12,
      eof: true,
      out_of_range: false,
    });
    assert.deepEqual(readLines(buf, 1, 11), {
      lines: ["line1"],
      total_lines: 12,
      eof: true,
      out_of_range: false,
    });
  });
});

Deno.test("readLines: an offset at or past the oldest line is out of range", async () => {
  await withTerm({ rows: 5 }, lines(4), (term) => {
    const buf = term.buffer.active;
    for (const offset of [4, 5, 1000]) {
      assert.deepEqual(readLines(buf, 10, offset), {
        lines: [],
        total_lines: 4,
        eof: true,
        out_of_range: true,
      }, `offset ${offset}`);
    }
  });
  await withTerm({}, "", (term) => {
    assert.equal(readLines(term.buffer.active, 10, 0).out_of_range, false);
    assert.equal(readLines(term.buffer.active, 10, 1).out_of_range, true);
  });
});

Deno.test("readLines: bounded scrollback reports eof at the oldest retained line", async () => {
  await withTerm({ rows: 5, scrollback: 10 }, lines(40), (term) => {
    const r = readLines(term.buffer.active, 1000, 0);
    assert.equal(r.total_lines, 15);
    assert.equal(r.lines[0], "line26");
    assert.equal(r.lines.at(-1), "line40");
    assert.equal(r.eof, true);
  });
});

Deno.test("readLines: right-trims rows and keeps wrapped rows apart", async () => {
  await withTerm({ cols: 10 }, "abc   \r\n" + "0123456789abcdefghij" + "klm", (term) => {
    assert.deepEqual(readLines(term.buffer.active, 10, 0).lines, ["abc", "0123456789", "abcdefghij", "klm"]);
  });
});

Deno.test("searchLines: case-insensitive, first row number, capped at max", async () => {
  await withTerm({ rows: 5 }, "Error one\r\nok\r\nerror two\r\nfine\r\nERROR three\r\n", (term) => {
    const buf = term.buffer.active;
    assert.deepEqual(searchLines(buf, "error", 50), [
      { line: 0, text: "Error one" },
      { line: 2, text: "error two" },
      { line: 4, text: "ERROR three" },
    ]);
    assert.deepEqual(searchLines(buf, "ERROR", 2), [
      { line: 0, text: "Error one" },
      { line: 2, text: "error two" },
    ]);
    assert.deepEqual(searchLines(buf, "missing", 50), []);
  });
});

Deno.test("searchLines: soft-wrapped rows are joined into one line", async () => {
  const long = "aaaa bbbb cccc dddd needle-here eeee";
  await withTerm({ cols: 10, rows: 5 }, "first\r\n" + long + "\r\nlast", (term) => {
    const buf = term.buffer.active;
    assert.equal(buf.getLine(2)!.isWrapped, true);
    assert.deepEqual(searchLines(buf, "needle-here", 10), [{ line: 1, text: long }]);
    assert.deepEqual(searchLines(buf, "dddd needle", 10), [{ line: 1, text: long }]);
    // A space that falls on a row's last column is part of the line.
    assert.deepEqual(searchLines(buf, "bbbb cccc", 10), [{ line: 1, text: long }]);
    assert.deepEqual(searchLines(buf, "last", 10), [{ line: 5, text: "last" }]);
  });
});

Deno.test("searchLines: a wide character pushed to the next row joins without a gap", async () => {
  await withTerm({ cols: 5 }, "abcd日本語x", (term) => {
    const buf = term.buffer.active;
    assert.equal(buf.getLine(1)!.isWrapped, true);
    assert.deepEqual(searchLines(buf, "d日本", 10), [{ line: 0, text: "abcd日本語x" }]);
  });
});

Deno.test("rows of written spaces count as blank", async () => {
  await withTerm({ cols: 10 }, "a  \r\n          \r\nb \r\n      ", (term) => {
    const buf = term.buffer.active;
    assert.equal(contentRows(buf), 3);
    assert.deepEqual(readLines(buf, 10, 0).lines, ["a", "", "b"]);
    assert.deepEqual(searchLines(buf, "b", 10), [{ line: 2, text: "b" }]);
  });
});

Deno.test("searchLines: a hard newline is not a wrap", async () => {
  await withTerm({ cols: 10 }, "0123456789\r\nabc", (term) => {
    assert.deepEqual(searchLines(term.buffer.active, "9abc", 10), []);
  });
});

Deno.test("snapshotModes reads bracketed paste, alternate screen, cursor keys and cursor", async () => {
  await withTerm({}, "hi", async (term) => {
    // What the xterm engine (./xterm_engine.ts) gives it.
    const engine = {
      modes: () => ({
        bracketedPaste: term.modes.bracketedPasteMode,
        applicationCursor: term.modes.applicationCursorKeysMode,
      }),
      get active() {
        return term.buffer.active;
      },
    };
    assert.deepEqual(snapshotModes(engine), {
      bracketed_paste: false,
      alternate_screen: false,
      application_cursor: false,
      cursor: { x: 2, y: 0 },
    });
    await write(term, "\x1b[?2004h\x1b[?1h\x1b[?1049h\x1b[3;5H");
    assert.deepEqual(snapshotModes(engine), {
      bracketed_paste: true,
      alternate_screen: true,
      application_cursor: true,
      cursor: { x: 4, y: 2 },
    });
  });
});

Deno.test("readLogicalLines joins soft-wrapped rows, keeping the spaces at the wrap", async () => {
  // 20 columns: "aaaa ... " wraps after 20 characters.
  const long = "0123456789 12345678 wrapped-tail";
  await withTerm({ cols: 20, rows: 5 }, `first\r\n${long}\r\nlast`, (term) => {
    const buf = term.buffer.active;
    assert.deepEqual(readLines(buf, 10, 0).lines, ["first", "0123456789 12345678", "wrapped-tail", "last"]);
    assert.deepEqual(readLogicalLines(buf, 10, 0), {
      lines: ["first", long, "last"],
      total_lines: 3,
      eof: true,
      out_of_range: false,
    });
    assert.deepEqual(readLogicalLines(buf, 1, 1).lines, [long]);
    assert.equal(readLogicalLines(buf, 1, 3).out_of_range, true);
  });
});

Deno.test("takeSnapshot hashes into a dropped snapshot's array when it fits, with the same result", async () => {
  await withTerm({ rows: 5, scrollback: 1000 }, lines(700), async (term) => {
    const buf = term.buffer.active;
    const old = takeSnapshot(buf, 1, 0, term.rows);
    await write(term, "\r\n" + lines(3, "new"));
    const fresh = takeSnapshot(buf, 2, 0, term.rows);
    const reused = takeSnapshot(buf, 2, 0, term.rows, old.hashes);
    assert.equal(reused.hashes, old.hashes, "the dropped array, not a new one");
    assert.deepEqual(reused, fresh);
    assert.deepEqual(changedSince(buf, 0, reused, 10).changed, []);
    // A pane whose history is still filling needs another length: a new array.
    const tiny = new Uint32Array(3);
    const short = takeSnapshot(buf, 2, 0, term.rows, tiny);
    assert.notEqual(short.hashes, tiny);
    assert.deepEqual(short, fresh);
  });
});
