import assert from "node:assert/strict";
import { NotifyRule } from "../spec/notify.ts";
import { globMatch, RuleState } from "./rules.ts";

const pane = { id: 1, name: "api", workspace: "main", tool: "claude" };

Deno.test("rules: a short turn sends nothing, a long one does", () => {
  const rules = [NotifyRule.parse({ when: ["finished"], to: ["hook"], min_turn_secs: 30, debounce_secs: 0 })];
  const st = new RuleState();
  assert.equal(st.onState(1, "thinking", "idle", 0), null);
  const short = st.onState(1, "finished", "thinking", 10_000)!;
  assert.deepEqual(st.fire(rules, pane, short, 10_000), []);
  st.onState(1, "thinking", "finished", 20_000);
  st.onState(1, "stalled", "thinking", 30_000);
  st.onState(1, "thinking", "stalled", 40_000);
  const long = st.onState(1, "finished", "thinking", 60_000)!;
  assert.equal(long.turnMs, 40_000);
  assert.deepEqual(st.fire(rules, pane, long, 60_000), [0]);
});

Deno.test("rules: debounce holds a flapping state to one notification; where selects", () => {
  const rules = [
    NotifyRule.parse({ when: ["waiting_for_input"], to: ["a"], debounce_secs: 10 }),
    NotifyRule.parse({ when: ["waiting_for_input"], to: ["b"], where: { pane: "web*" } }),
  ];
  const st = new RuleState();
  const fired: number[][] = [];
  for (let t = 0; t < 9000; t += 1000) {
    st.onState(1, "thinking", "waiting_for_input", t);
    fired.push(st.fire(rules, pane, st.onState(1, "waiting_for_input", "thinking", t + 500)!, t + 500));
  }
  assert.deepEqual(fired.flat(), [0]);
  assert.deepEqual(st.fire(rules, pane, { when: "waiting_for_input", turnMs: null }, 11_000), [0]);
  assert.deepEqual(
    st.fire(rules, { ...pane, id: 2, name: "web-1" }, { when: "waiting_for_input", turnMs: null }, 0),
    [
      0,
      1,
    ],
  );
  assert.ok(globMatch("a?c*", "abcdef"));
  assert.ok(!globMatch("a.c", "abc"));
});
