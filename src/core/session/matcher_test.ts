import assert from "node:assert/strict";
import { evaluate, hasStable, type MatchInput, parseMatcher } from "./matcher.ts";
import { RpcError } from "../../errors.ts";

const input = (over: Partial<MatchInput> = {}): MatchInput => ({
  screen: () => "READY> hello\n> hello",
  transcript: () => "READY> hello\r\n> hello\r\n",
  cursor: { row: 1, col: 7 },
  exited: false,
  stableMs: 100,
  ...over,
});

Deno.test("every matcher type evaluates as ptywright's", () => {
  const re = new Map();
  const ok = (raw: unknown, i = input()) => evaluate(parseMatcher(raw), i, re);
  assert.ok(ok({ type: "contains_text", value: "> hello" }));
  assert.ok(!ok({ type: "contains_text", value: "bye" }));
  assert.ok(ok({ type: "screen_regex", value: "(?m)^> h.llo$" }));
  assert.ok(ok({ type: "transcript_contains", value: "hello\r\n>" }));
  assert.ok(ok({ type: "transcript_regex", value: "READY> (\\w+)" }));
  assert.ok(ok({ type: "cursor_at", value: { row: 1, col: 7 } }));
  assert.ok(!ok({ type: "cursor_at", value: { row: 0, col: 7 } }));
  assert.ok(ok({ type: "screen_stable", value: { min_ms: 100 } }));
  assert.ok(!ok({ type: "screen_stable", value: { min_ms: 101 } }));
  assert.ok(!ok({ type: "process_exited" }));
  assert.ok(ok({ type: "process_exited" }, input({ exited: true })));
  assert.ok(
    ok({ type: "any", value: [{ type: "process_exited" }, { type: "contains_text", value: "READY" }] }),
  );
  assert.ok(
    !ok({ type: "all", value: [{ type: "process_exited" }, { type: "contains_text", value: "READY" }] }),
  );
  assert.ok(!ok({ type: "any", value: [] }));
  assert.ok(ok({ type: "all", value: [] }));
  assert.ok(
    hasStable(parseMatcher({ type: "all", value: [{ type: "screen_stable", value: { min_ms: 1 } }] })),
  );
});

Deno.test("matcher validation: clear -32602 naming the node, no recursion on deep trees", () => {
  const bad = (raw: unknown, re: RegExp) =>
    assert.throws(
      () => parseMatcher(raw),
      (e: unknown) => e instanceof RpcError && e.code === -32602 && re.test(e.message),
    );
  bad({ type: "nope" }, /`matcher`: unknown variant "nope"/);
  bad(
    { type: "any", value: [{ type: "contains_text", value: 1 }] },
    /`matcher.value\[0\].value`: expected a string/,
  );
  bad({ type: "screen_regex", value: "a(" }, /invalid regex/);
  bad({ type: "screen_regex", value: "(?<=x)y" }, /invalid regex/);
  bad({ type: "screen_stable", value: { min_ms: -1 } }, /min_ms/);
  bad({ type: "lua", value: {} }, /plugin support/);
  let deep: unknown = { type: "process_exited" };
  for (let i = 0; i < 10_000; i++) deep = { type: "all", value: [deep] };
  bad(deep, /nested more than 64 levels/);
  // Extra fields are dropped, not carried to the worker.
  assert.deepEqual(parseMatcher({ type: "process_exited", value: 5, junk: 1 }), { type: "process_exited" });
});
