import assert from "node:assert/strict";
import { hexWord, keyWord } from "./keys.ts";

Deno.test("tmux keys: names, modifiers, and text typed as-is", () => {
  assert.equal(keyWord("Enter"), "\r");
  assert.equal(keyWord("C-c"), "\x03");
  assert.equal(keyWord("M-x"), "\x1bx");
  assert.equal(keyWord("Up"), "\x1b[A");
  assert.equal(keyWord("echo hi"), "echo hi");
  assert.equal(keyWord("C-"), "C-");
  assert.equal(hexWord("41"), "A");
  assert.equal(hexWord("zz"), null);
});
