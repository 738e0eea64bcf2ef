import assert from "node:assert/strict";
import { stripPasteEnd, submitDelayMs } from "./submit.ts";

const PASTE_END = "\x1b[201~";

Deno.test("submitDelayMs: the base plus 5 ms per KiB, at most 1 s more", () => {
  assert.equal(submitDelayMs(70, 0), 70);
  assert.equal(submitDelayMs(70, 1023), 70);
  assert.equal(submitDelayMs(70, 1024), 75);
  assert.equal(submitDelayMs(70, 10 * 1024 + 5), 120);
  assert.equal(submitDelayMs(70, 64 * 1024), 390);
  assert.equal(submitDelayMs(0, 200 * 1024), 1000);
  assert.equal(submitDelayMs(0, 201 * 1024), 1000);
  assert.equal(submitDelayMs(70, 10_000_000), 1070);
});

Deno.test("stripPasteEnd removes the bracketed-paste terminator", () => {
  assert.equal(stripPasteEnd("hello"), "hello");
  assert.equal(stripPasteEnd(""), "");
  assert.equal(stripPasteEnd(`a${PASTE_END}b${PASTE_END}`), "ab");
  assert.equal(stripPasteEnd("\x1b[200~x"), "\x1b[200~x");
  assert.equal(stripPasteEnd("\x1b[201"), "\x1b[201");
});

Deno.test("stripPasteEnd: removing a terminator cannot assemble a new one", () => {
  assert.equal(stripPasteEnd(`\x1b[20${PASTE_END}1~`).includes(PASTE_END), false);
  assert.equal(stripPasteEnd(`\x1b${PASTE_END}[201~`).includes(PASTE_END), false);
  assert.equal(stripPasteEnd(`\x1b[2\x1b[20\x1b[201~1~01~`).includes(PASTE_END), false);
  const deep = 10_000;
  assert.equal(stripPasteEnd("\x1b[20".repeat(deep) + PASTE_END + "1~".repeat(deep)), "");
  assert.equal(stripPasteEnd(`😀\x1b[20${PASTE_END}1~😀`), "😀😀");
  // Property: over many shuffles of terminator fragments, none survives.
  const pieces = ["\x1b", "[", "2", "0", "1", "~", "\x1b[", "201~", "\x1b[20", "1~", PASTE_END, "x"];
  let seed = 12345;
  const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  for (let i = 0; i < 20_000; i++) {
    let text = "";
    const n = 1 + Math.floor(rand() * 14);
    for (let j = 0; j < n; j++) text += pieces[Math.floor(rand() * pieces.length)];
    const out = stripPasteEnd(text);
    assert.ok(!out.includes(PASTE_END), `${JSON.stringify(text)} -> ${JSON.stringify(out)}`);
    if (!text.includes(PASTE_END)) assert.equal(out, text);
  }
});
