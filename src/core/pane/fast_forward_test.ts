import assert from "node:assert/strict";
import { createTerminal } from "./terminal.ts";
import { FastForward, runEnd } from "./fast_forward.ts";
import { rng } from "../../../tests/_prng.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

const enc = new TextEncoder();

/** Two panes' terminals fed the same bytes: one parses everything, the other jump-scrolls. */
function pair(cols: number, rows: number, scrollback: number) {
  const ref = createTerminal(cols, rows, scrollback);
  const ff = createTerminal(cols, rows, scrollback);
  const jump = FastForward.attach(ff.term, ff.scrollback, ff.parseNow)!;
  assert.ok(jump, "xterm's internals are as FastForward expects");
  const feed = (data: Uint8Array) => {
    ref.parseNow!(data);
    ref.scrollback!.afterParse();
    jump.parse(data);
    ff.scrollback!.afterParse();
  };
  const same = (what: string) => {
    const a = ref.scrollback!, b = ff.scrollback!;
    assert.equal(b.skipping, 0, `${what}: no eviction left to skip`);
    assert.equal(b.store.length, a.store.length, `${what}: rows in the store`);
    assert.equal(b.trimmed, a.trimmed, `${what}: rows dropped`);
    for (let i = 0; i < a.store.length; i++) {
      if (a.store.text(i) !== b.store.text(i) || a.store.wrapped(i) !== b.store.wrapped(i)) {
        assert.deepEqual(
          [b.store.text(i), b.store.wrapped(i)],
          [a.store.text(i), a.store.wrapped(i)],
          `${what}: stored row ${i}`,
        );
      }
      assert.equal(b.store.hash(i), a.store.hash(i), `${what}: stored row ${i}'s hash`);
    }
    const ca = (ref.term as Any)._core, cb = (ff.term as Any)._core;
    for (const kind of ["normal", "alt"]) {
      const la = ca.buffers[kind].lines, lb = cb.buffers[kind].lines;
      assert.equal(lb.length, la.length, `${what}: ${kind} rows in xterm`);
      for (let y = 0; y < la.length; y++) {
        const ra = la.get(y), rb = lb.get(y);
        assert.equal(rb.isWrapped, ra.isWrapped, `${what}: ${kind} row ${y} wrapped`);
        assert.deepEqual(rb._data, ra._data, `${what}: ${kind} row ${y}, cell for cell`);
        assert.deepEqual(rb._combined, ra._combined, `${what}: ${kind} row ${y}'s combined characters`);
      }
    }
    const ba = ca.buffers.active, bb = cb.buffers.active;
    assert.deepEqual([bb.x, bb.y, bb.ybase, bb.ydisp], [ba.x, ba.y, ba.ybase, ba.ydisp], `${what}: cursor`);
    const aa = ca._inputHandler._curAttrData, ab = cb._inputHandler._curAttrData;
    assert.deepEqual([ab.fg, ab.bg, ab.extended], [aa.fg, aa.bg, aa.extended], `${what}: current colours`);
  };
  return { feed, same, jump };
}

const SGR = [
  "\x1b[0;1;4:3;58;5;3m",
  "\x1b[4:2m\x1b[58:2::1:2:3m",
  "\x1b[01;32m",
  "\x1b[0m",
  "\x1b[1;31m",
  "\x1b[44m",
  "\x1b[38;5;208m",
  "\x1b[48;2;10;20;30m",
  "\x1b[4:3m",
  "\x1b[m",
  "\x1b[7m",
];
/** What ends a run (a raw byte list is invalid UTF-8). */
const OTHER: (string | number[])[] = [
  "\x07",
  "\x1b[2K",
  "\x1b[A",
  "\x1b]0;title\x07",
  "\x1b[3;5r\x1b[r",
  "\x1b(0q\x1b(B",
  "\x08",
  "\u0085", // a C1 control in UTF-8
  [0xff],
  [0xe6, 0x97], // cut short
  [0xc0, 0xaf], // overlong
  "é\tafter a tab",
];
/** Characters other than ASCII a run lays out on the scratch terminal. */
const WIDE = ["é", "─", "✓", "→", "€", "日本語", "변경", "e\u0301", "\u0301x", "🙂", "\u200b", "ｱ"];

/** Random output of `lines` lines: mostly plain text, with what a run must handle and (if `other`) what ends one. */
function stream(seed: number, lines: number, cols: number, other: boolean): Uint8Array {
  const r = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const parts: Uint8Array[] = [];
  let out = "";
  for (let i = 0; i < lines; i++) {
    const kind = r();
    const word = () => "abcdefghij klmnopq-_=+/".slice(Math.floor(r() * 10), 12 + Math.floor(r() * 12));
    let line = "";
    if (kind < 0.05) line = "";
    else if (kind < 0.1) line = "x".repeat(cols); // exactly one row
    else if (kind < 0.15) line = "y".repeat(cols * (1 + Math.floor(r() * 3)) + Math.floor(r() * 3)); // wraps
    else if (kind < 0.2) line = `\t${word()}\t${word()}${r() < 0.3 ? "\t" : ""}`;
    else if (kind < 0.25) line = `${word()}   `; // written trailing spaces
    else if (kind < 0.3) line = `${word()}${word()}\r${word()}`; // overwrite
    else if (kind < 0.4) line = `${pick(SGR)}${word()}${pick(SGR)} ${word()}`;
    else if (kind < 0.42) line = `${"z".repeat(cols)}\t!`; // tab at the pending wrap
    else if (kind < 0.47) line = `${word()} ${pick(WIDE)} ${pick(SGR)}${word()}${pick(WIDE)}`;
    else if (kind < 0.49) {
      line = `${"w".repeat(cols - 1 - Math.floor(r() * 2))}漢字${pick(WIDE).repeat(cols)}`; // wide at the edge
    } else if (kind < 0.51) line = `漢字${pick(WIDE)}漢\r${r() < 0.5 ? " a" : "ab"}`; // written over
    else line = `${word()} ${word()} ${i}`;
    out += line;
    if (other && r() < 0.01) {
      const o = pick(OTHER);
      if (typeof o === "string") out += o;
      else {
        parts.push(enc.encode(out), new Uint8Array(o));
        out = "";
      }
    }
    out += r() < 0.02 ? "\n" : "\r\n"; // a bare LF now and then
  }
  parts.push(enc.encode(out));
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

/** Splits `data` into batches of random sizes, cutting anywhere (inside sequences too). */
function* batches(data: Uint8Array, seed: number, max: number) {
  const r = rng(seed);
  for (let at = 0; at < data.length;) {
    const n = 1 + Math.floor(r() * max);
    yield data.subarray(at, at + n);
    at += n;
  }
}

Deno.test("jump scroll: plain text in big batches stores the same rows and leaves xterm cell for cell the same", () => {
  const p = pair(40, 10, 1000);
  const data = stream(1, 6000, 40, false);
  let n = 0;
  for (const b of batches(data, 2, 64 * 1024)) {
    p.feed(b);
    p.same(`batch ${++n}`);
  }
  assert.ok(p.jump.skipped > 3000, `most rows laid out without xterm (${p.jump.skipped})`);
});

Deno.test("jump scroll: mixed output, every batch size, history smaller than the run", () => {
  for (const [seed, max, history] of [[3, 300, 50], [4, 20_000, 100], [5, 90_000, 10_000], [6, 5_000, 0]]) {
    const p = pair(30, 8, history);
    const data = stream(seed, 8000, 30, true);
    let n = 0;
    for (const b of batches(data, seed + 100, max)) {
      p.feed(b);
      p.same(`seed ${seed}, batch ${++n}`);
    }
    if (max > 5000 && history > 0) {
      assert.ok(p.jump.skipped > 0, `seed ${seed}: some rows laid out (${p.jump.skipped})`);
    }
  }
});

Deno.test("jump scroll: the row xterm's last line feeds start on has the colours of the run's end", () => {
  // No wraps and CR LF everywhere: the run's last line feeds are exactly the ones xterm parses.
  for (let seed = 7; seed < 12; seed++) {
    const r = rng(seed);
    const p = pair(30, 8, 1000);
    const lines = Array.from(
      { length: 400 },
      (_, i) => `${r() < 0.2 ? `\x1b[${40 + Math.floor(r() * 8)}m` : ""}row ${i}`,
    );
    p.feed(enc.encode("\x1b[42m" + lines.join("\r\n") + "\r\n"));
    p.feed(enc.encode(`\x1b[45m${lines.join("\r\n")}\r\n`));
    p.same(`seed ${seed}`);
    assert.ok(p.jump.skipped > 200, `seed ${seed}: rows laid out (${p.jump.skipped})`);
  }
});

Deno.test("jump scroll: not in the alternate screen, inside scroll margins, or with the cursor off the bottom row", () => {
  const plain = (n: number) =>
    enc.encode(Array.from({ length: n }, (_, i) => `line ${i}`).join("\r\n") + "\r\n");
  for (const setup of ["\x1b[?1049h", "\x1b[2;6r", "\x1b[H\x1b[2J", "\x1b[4h", "\x1b[?7l", "\x1b(0"]) {
    const p = pair(30, 8, 1000);
    p.feed(enc.encode(setup));
    p.feed(plain(2000));
    p.same(`after ${JSON.stringify(setup)}`);
    if (setup === "\x1b[H\x1b[2J") {
      assert.ok(p.jump.skipped > 1000, "a cleared screen: laid out once it is full");
    } else assert.equal(p.jump.skipped, 0, `${JSON.stringify(setup)}: xterm parses it all`);
  }
});

Deno.test("runEnd: stops at what a run cannot hold, takes whole SGR sequences", () => {
  const at = (s: string) => runEnd(enc.encode(s), 0);
  assert.equal(at("abc\r\n\tdef"), 9);
  assert.equal(at("a\x1b[1;38:5:3mb"), 13);
  assert.equal(at("a\x1b[?25lb"), 1);
  assert.equal(at("a\x1b[1"), 1); // cut before its final byte
  assert.equal(at("aé漢🙂b"), 11);
  assert.equal(at("a\u0085b"), 1); // C1
  for (const bad of [0xff, 0x80, 0x7f]) { // inside an aligned word of four
    assert.equal(
      runEnd(new Uint8Array([0x61, 0x62, 0x63, bad, 0x0d, 0x0a, 0x61, 0x62]), 0),
      3,
      `byte ${bad}`,
    );
  }
  assert.equal(runEnd(new Uint8Array([0x61, 0xe6, 0x97]), 0), 1); // cut short
  assert.equal(at("a\x07"), 1);
  assert.equal(at("x\r\né\tb"), 5); // a TAB in a line with other characters than ASCII
  assert.equal(at("x\r\n\tb é"), 6);
  assert.equal(runEnd(enc.encode("x\r\né long line\r\n"), 0, undefined, 8), 3); // at its start
});
