import assert from "node:assert/strict";
import { capsIssues, unmatchedSelectors } from "./check.ts";

const at = ["panes", 0, "caps"];
const messages = (value: unknown, names: string[] | null = ["lead", "worker-1"]) =>
  capsIssues(value, at, names).map((i) => `${i.path.join(".")}: ${i.message}`);

Deno.test("caps check: a good grant has no problem; absent is fine", () => {
  assert.deepEqual(messages({ write: ["worker-*", "3", "self"], read: "workspace", admin: "none" }), []);
  assert.deepEqual(messages(undefined), []);
});

Deno.test("caps check: every bad part is reported at its key, never widened", () => {
  assert.deepEqual(messages("all"), [
    'panes.0.caps: must be a table of capabilities, e.g. { write = ["worker-*"] }, not a string ("all")',
  ]);
  assert.deepEqual(messages({ writ: "all" }), [
    'panes.0.caps.writ: unknown capability "writ"; did you mean "write"? (one of read, write, submit, manage, msg, admin, hook)',
  ]);
  assert.match(messages({ read: "everywhere" })[0], /^panes\.0\.caps\.read: "everywhere" is not a scope/);
  assert.match(
    messages({ read: 3 })[0],
    /must be "none", "self", "workspace", "all" or a list.*not a number \(3\)/,
  );
  assert.deepEqual(messages({ write: [] }), [
    'panes.0.caps.write: an empty list grants nothing: write "none"',
  ]);
  assert.deepEqual(messages({ write: ["all"] }), [
    'panes.0.caps.write.0: "all" stands alone: write write = "all", not in a list',
  ]);
  assert.deepEqual(messages({ write: ["reviewer"] }), [
    'panes.0.caps.write.0: selector "reviewer" matches no pane of this spec (its panes: "lead", "worker-1")',
  ]);
  assert.deepEqual(messages({ write: ["reviewer"] }, null), [], "null: selectors are matched elsewhere");
  assert.deepEqual(unmatchedSelectors({ write: ["worker-?", "x*"] }, at, ["worker-1"]).map((i) => i.path), [
    ["panes", 0, "caps", "write", 1],
  ]);
});
