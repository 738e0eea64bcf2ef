import assert from "node:assert/strict";
import { foreground, groupLeaders, parseTpgid, processGroupsAsync } from "./proc.ts";

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

Deno.test("groupLeaders: a group's leader with its argv, as a /proc scan finds it; no leader, no entry", async () => {
  // setsid makes sleep the leader of a process group of its own.
  const child = new Deno.Command("setsid", { args: ["sleep", "30"], stdout: "null", stderr: "null" }).spawn();
  try {
    // Spawning returns before the exec is done.
    while (!(await Deno.readTextFile(`/proc/${child.pid}/cmdline`)).endsWith("sleep\x0030\0")) {
      await new Promise((r) => setTimeout(r, 1));
    }
    const leaders = groupLeaders(new Set([child.pid, 2 ** 22 + 12345]));
    assert.deepEqual([...leaders.entries()], [[child.pid, [{
      pid: child.pid,
      pgrp: child.pid,
      argv: ["sleep", "30"],
    }]]]);
    assert.deepEqual((await processGroupsAsync(new Set([child.pid]))).get(child.pid), leaders.get(child.pid));
  } finally {
    child.kill();
    await child.status;
  }
});
