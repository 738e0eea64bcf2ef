import assert from "node:assert/strict";
import { dollars, usageOptions } from "./usage.ts";
import { budgetParams } from "./budget.ts";

Deno.test("usage options: --by and --since", () => {
  const now = Date.parse("2026-01-02T00:00:00Z");
  assert.deepEqual(usageOptions({}, now), { by: "pane" });
  assert.deepEqual(usageOptions({ by: "model", since: "2h" }, now), { by: "model", since: now - 7_200_000 });
  assert.deepEqual(usageOptions({ since: "2026-01-01T00:00:00Z" }, now), {
    by: "pane",
    since: Date.parse("2026-01-01T00:00:00Z"),
  });
  assert.throws(() => usageOptions({ by: "host" }, now), /"--by" must be one of "pane", .*not "host"/);
  assert.throws(
    () => usageOptions({ since: "yesterday" }, now),
    /"--since" takes a duration .*not "yesterday"/,
  );
});

Deno.test("usage: dollars", () => {
  assert.equal(dollars(0), "$0.00");
  assert.equal(dollars(1.234), "$1.23");
  assert.equal(dollars(0.00123), "$0.0012");
});

Deno.test("budget options", () => {
  assert.deepEqual(budgetParams({ usd: 5 }), { usd: 5 });
  assert.deepEqual(budgetParams({ add: 2, hard: true }), { add_usd: 2, hard: true });
  assert.deepEqual(budgetParams({ tokens: 2000, per: "workspace" }), { tokens: 2000, per: "workspace" });
  assert.throws(() => budgetParams({}), /give "--usd", "--tokens" or "--add"/);
  assert.throws(() => budgetParams({ usd: 1, add: 1 }), /give one/);
  assert.throws(() => budgetParams({ tokens: 1.5 }), /"--tokens" must be a positive integer, not "1.5"/);
  assert.throws(() => budgetParams({ usd: 1, per: "host" }), /"--per" is "pane" or "workspace", not "host"/);
});
