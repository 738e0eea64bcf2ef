import assert from "node:assert/strict";
import { expand } from "./format.ts";

const vars: Record<string, string> = {
  pane_id: "%3",
  pane_active: "1",
  pane_dead: "0",
  session_name: "s1",
  window_index: "0",
  pane_index: "2",
};
const lookup = (n: string) => vars[n];

Deno.test("tmux format: variables, unknown ones empty, short aliases and ##", () => {
  assert.equal(expand("#{pane_id}", lookup), "%3");
  assert.equal(expand("[#{nosuch}]", lookup), "[]");
  assert.equal(expand("#S:#I.#P ##", lookup), "s1:0.2 #");
  assert.equal(expand("#{session_name}:#{window_index}.#{pane_id}", lookup), "s1:0.%3");
});

Deno.test("tmux format: conditionals and comparisons, nested", () => {
  assert.equal(expand("#{?pane_active,A,B}", lookup), "A");
  assert.equal(expand("#{?pane_dead,A,B}", lookup), "B");
  assert.equal(expand("#{?nosuch,A,}", lookup), "");
  assert.equal(expand("#{==:#{session_name},s1}", lookup), "1");
  assert.equal(expand("#{!=:a,a}", lookup), "0");
  assert.equal(expand("#{?#{==:#{pane_index},2},two,other}", lookup), "two");
  assert.equal(expand("#{?pane_active,#{pane_id}#,x,B}", lookup), "%3,x");
});
