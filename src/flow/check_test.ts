import assert from "node:assert/strict";
import { MAX_TEXT_BYTES, TRUNCATED } from "../spec/flow.ts";
import { findCycles } from "./cycles.ts";
import { substitute, truncate, withItem } from "./substitute.ts";

const bytes = (s: string) => new TextEncoder().encode(s).length;

Deno.test("substitute: ${var}, ${var.<item>}, a whole foreach group, unknown names kept", () => {
  const values = new Map<string, string | Map<string, string>>([
    ["summary", "all good"],
    ["result", new Map([["api", "ok"], ["web", "failed"]])],
  ]);
  assert.equal(substitute("said: ${summary}", values), "said: all good");
  assert.equal(substitute("${result.api}/${result.web}", values), "ok/failed");
  assert.equal(substitute("${result}", values), "api: ok\nweb: failed");
  assert.equal(
    substitute("${nope} ${summary.x} ${result.cli} ${item}", values),
    "${nope} ${summary.x} ${result.cli} ${item}",
  );
  assert.equal(withItem("check-${item}:${item}", "api"), "check-api:api");
  assert.equal(withItem("check-${item}", null), "check-${item}");
});

Deno.test("truncate: text over 64 KiB ends with the marker and stays within 64 KiB, never in the middle of a character", () => {
  assert.equal(truncate("short"), "short");
  const exact = "x".repeat(MAX_TEXT_BYTES);
  assert.equal(truncate(exact), exact);
  const cut = truncate("y".repeat(MAX_TEXT_BYTES + 1));
  assert.ok(cut.endsWith(TRUNCATED));
  assert.equal(bytes(cut), MAX_TEXT_BYTES);
  // "é" is 2 bytes, "€" 3, "😀" 4: every cut point lands inside one of them at some offset.
  for (const ch of ["é", "€", "😀"]) {
    for (let pad = 0; pad < 4; pad++) {
      const t = truncate("a".repeat(pad) + ch.repeat(MAX_TEXT_BYTES));
      assert.ok(t.endsWith(TRUNCATED));
      assert.ok(bytes(t) <= MAX_TEXT_BYTES);
      assert.ok(!t.includes("\uFFFD"), `no replacement character (${ch}, pad ${pad})`);
    }
  }
  // Substitution truncates what it built.
  const big = new Map([["v", "z".repeat(MAX_TEXT_BYTES)]]);
  assert.ok(substitute("before ${v}", big).endsWith(TRUNCATED));
});

Deno.test("findCycles: one path per cycle group, in file order; none for a DAG", () => {
  const edges = (o: Record<string, string[]>) => new Map(Object.entries(o));
  assert.deepEqual(findCycles(edges({ a: [], b: ["a"], c: ["a", "b"] })), []);
  assert.deepEqual(findCycles(edges({ a: ["c"], b: ["a"], c: ["b"], d: [], e: ["f"], f: ["e"] })), [
    ["a", "c", "b", "a"],
    ["e", "f", "e"],
  ]);
  // Two cycles through one node are one group.
  const [only, ...rest] = findCycles(edges({ a: ["b", "c"], b: ["a"], c: ["a"] }));
  assert.deepEqual(rest, []);
  assert.equal(only[0], "a");
  assert.equal(only.at(-1), "a");
});
