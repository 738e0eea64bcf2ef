import assert from "node:assert/strict";
import { foreground, groupHeads, parseTpgid } from "./proc.ts";

/** A /proc/<pid>/stat line: pid (comm) state ppid pgrp session tty_nr tpgid flags ... */
function stat(comm: string, tpgid: number | string): string {
  return `4242 (${comm}) S 4000 4242 4242 34817 ${tpgid} 4194560 1020 0 0 0 3 1 0 0 20 0 1 0 123 8675328`;
}

Deno.test("parseTpgid reads field 8", () => {
  assert.equal(parseTpgid(stat("bash", 5150)), 5150);
  assert.equal(parseTpgid(stat("bash", 1)), 1);
});

Deno.test("parseTpgid survives a comm with spaces and parentheses", () => {
  for (
    const comm of [
      "tmux: server",
      "a b c d e f g",
      "(sd-pam)",
      "x) S 1 2 3 4 99 (",
      "))",
      "( ",
      "",
      "vi ) (x",
    ]
  ) {
    assert.equal(parseTpgid(stat(comm, 777)), 777, JSON.stringify(comm));
  }
});

Deno.test("parseTpgid: no controlling terminal or a malformed line is null", () => {
  assert.equal(parseTpgid(stat("daemon", -1)), null);
  assert.equal(parseTpgid(stat("daemon", 0)), null);
  assert.equal(parseTpgid(stat("x", "abc")), null);
  assert.equal(parseTpgid("4242 bash S 1 2 3 4 5"), null);
  assert.equal(parseTpgid(""), null);
  assert.equal(parseTpgid("4242 (bash) S 1 2"), null);
});

Deno.test("foreground: a pid that does not exist is null", () => {
  assert.equal(foreground(2 ** 22 + 12345), null);
});

Deno.test("groupHeads: the process whose pid is the group id comes first, with its argv; none for a group without one", () => {
  const argv = Deno.readTextFileSync(`/proc/${Deno.pid}/cmdline`).split("\0").slice(0, -1);
  const heads = groupHeads(new Set([Deno.pid, 2 ** 22 + 12345]));
  assert.deepEqual([...heads.keys()], [Deno.pid]);
  assert.deepEqual(heads.get(Deno.pid)![0], { pid: Deno.pid, pgrp: Deno.pid, argv });
});
