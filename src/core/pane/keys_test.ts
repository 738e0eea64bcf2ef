import assert from "node:assert/strict";
import { bracketedPaste, KEY_NAMES, keyBytes, PASTE_END, stripPasteEnd } from "./keys.ts";

function bytes(name: string, applicationCursor = false): string {
  const r = keyBytes(name, { applicationCursor });
  assert.ok("bytes" in r, `${JSON.stringify(name)}: ${"error" in r ? r.error : ""}`);
  return r.bytes;
}

function refused(name: string): string {
  const r = keyBytes(name);
  assert.ok("error" in r, `${JSON.stringify(name)} gave ${JSON.stringify(r)}`);
  return r.error;
}

Deno.test("keyBytes: every named key", () => {
  const expected: Record<string, string> = {
    tab: "\t",
    "shift-tab": "\x1b[Z",
    esc: "\x1b",
    escape: "\x1b",
    backspace: "\x7f",
    delete: "\x1b[3~",
    insert: "\x1b[2~",
    home: "\x1b[H",
    end: "\x1b[F",
    pageup: "\x1b[5~",
    pagedown: "\x1b[6~",
    space: " ",
    up: "\x1b[A",
    down: "\x1b[B",
    right: "\x1b[C",
    left: "\x1b[D",
    f1: "\x1bOP",
    f2: "\x1bOQ",
    f3: "\x1bOR",
    f4: "\x1bOS",
    f5: "\x1b[15~",
    f6: "\x1b[17~",
    f7: "\x1b[18~",
    f8: "\x1b[19~",
    f9: "\x1b[20~",
    f10: "\x1b[21~",
    f11: "\x1b[23~",
    f12: "\x1b[24~",
  };
  for (const [name, want] of Object.entries(expected)) {
    assert.equal(bytes(name), want, name);
  }
});

Deno.test("keyBytes: arrows follow application cursor mode", () => {
  assert.equal(bytes("up", true), "\x1bOA");
  assert.equal(bytes("down", true), "\x1bOB");
  assert.equal(bytes("right", true), "\x1bOC");
  assert.equal(bytes("left", true), "\x1bOD");
  assert.equal(bytes("alt-up", true), "\x1b\x1bOA");
  // Other keys do not change.
  assert.equal(bytes("home", true), "\x1b[H");
  assert.equal(bytes("f1", true), "\x1bOP");
  assert.equal(bytes("ctrl-c", true), "\x03");
});

Deno.test("keyBytes: ctrl-<letter> is the C0 control", () => {
  const letters = "abcdefghiklnopqrstuvwxyz"; // m and j submit
  for (const c of letters) {
    assert.equal(bytes(`ctrl-${c}`), String.fromCharCode(c.charCodeAt(0) - 96), `ctrl-${c}`);
  }
  assert.equal(bytes("ctrl-a"), "\x01");
  assert.equal(bytes("ctrl-c"), "\x03");
  assert.equal(bytes("ctrl-d"), "\x04");
  assert.equal(bytes("ctrl-z"), "\x1a");
  assert.equal(bytes("ctrl-["), "\x1b");
  assert.equal(bytes("ctrl-\\"), "\x1c");
  assert.equal(bytes("ctrl-]"), "\x1d");
  assert.equal(bytes("ctrl-^"), "\x1e");
  assert.equal(bytes("ctrl-_"), "\x1f");
  assert.equal(bytes("ctrl-@"), "\x00");
  assert.equal(bytes("ctrl-space"), "\x00");
});

Deno.test("keyBytes: alt-<key> prefixes ESC", () => {
  assert.equal(bytes("alt-x"), "\x1bx");
  assert.equal(bytes("alt-."), "\x1b.");
  assert.equal(bytes("alt-b"), "\x1bb");
  assert.equal(bytes("alt-tab"), "\x1b\t");
  assert.equal(bytes("alt-backspace"), "\x1b\x7f");
  assert.equal(bytes("alt-ctrl-c"), "\x1b\x03");
  assert.equal(bytes("alt-left"), "\x1b\x1b[D");
  assert.equal(bytes("M-x"), "\x1bx");
  assert.equal(bytes("m-f"), "\x1bf");
  assert.equal(bytes("alt+x"), "\x1bx");
});

Deno.test("keyBytes: names are case-insensitive and accept ctrl+c and C-c", () => {
  for (const name of ["ctrl-c", "CTRL-C", "Ctrl-c", "ctrl+c", "Ctrl+C", "C-c", "c-c", "  ctrl-c  "]) {
    assert.equal(bytes(name), "\x03", name);
  }
  assert.equal(bytes("TAB"), "\t");
  assert.equal(bytes("Escape"), "\x1b");
  assert.equal(bytes("PageUp"), "\x1b[5~");
  assert.equal(bytes("F12"), "\x1b[24~");
  assert.equal(bytes("Shift+Tab"), "\x1b[Z");
  assert.equal(bytes("Up"), "\x1b[A");
});

Deno.test("keyBytes: every submitting keystroke is refused", () => {
  for (
    const name of [
      "enter",
      "Enter",
      "ENTER",
      "return",
      "ctrl-m",
      "C-m",
      "ctrl+M",
      "ctrl-j",
      "C-j",
      "alt-enter",
      "M-Enter",
      "alt-return",
      "alt-ctrl-m",
      "alt-ctrl-j",
    ]
  ) {
    assert.equal(
      refused(name),
      `Key ${JSON.stringify(name)} would submit and is refused; use send --submit to submit text`,
      name,
    );
  }
});

Deno.test("keyBytes: unknown keys name the key and list the known ones", () => {
  for (const name of ["f13", "ctrl-", "ctrl-1", "ctrl-ab", "alt-", "hyper-x", "", "\r", "\n", "S-tab"]) {
    // Named as a JSON string: a control character in the name cannot break the error line.
    assert.equal(refused(name), `Unknown key ${JSON.stringify(name)}; known keys: ${KEY_NAMES}`, name);
  }
});

Deno.test("keyBytes: no accepted key contains CR or LF", () => {
  const names = [
    ...KEY_NAMES.split(", ").filter((n) => /^[a-z0-9-]+$/.test(n)),
    ..."abcdefghijklmnopqrstuvwxyz@[]\\^_".split("").map((c) => `ctrl-${c}`),
    ..."abcdefghijklmnopqrstuvwxyz".split("").map((c) => `alt-ctrl-${c}`),
    "alt-\r",
    "alt-\n",
    "alt-\rx",
    "alt-\u2028",
  ];
  for (const name of names) {
    const r = keyBytes(name);
    if ("bytes" in r) {
      assert.ok(!/[\r\n]/.test(r.bytes), `${JSON.stringify(name)} sends ${JSON.stringify(r.bytes)}`);
    }
  }
});

Deno.test("keyBytes types one printable character as itself", () => {
  assert.deepEqual(keyBytes("1"), { bytes: "1" });
  assert.deepEqual(keyBytes("Y"), { bytes: "Y" });
  assert.deepEqual(keyBytes("/"), { bytes: "/" });
  assert.deepEqual(keyBytes("é"), { bytes: "é" });
  assert.ok("error" in keyBytes("\r"));
  assert.ok("error" in keyBytes("\n"));
  assert.ok("error" in keyBytes("\x07"));
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

Deno.test("bracketedPaste wraps once; a terminator inside, even a nested one, cannot end it early", () => {
  assert.equal(bracketedPaste("a\nb"), "\x1b[200~a\nb\x1b[201~");
  const nasty = "x\x1b[2\x1b[201~01~y";
  const out = bracketedPaste(nasty);
  assert.equal(out.indexOf("\x1b[201~"), out.length - "\x1b[201~".length);
  assert.ok(out.startsWith("\x1b[200~x") && out.includes("y"));
});
