import assert from "node:assert/strict";
import { addRecords, emptyLedger, summarize } from "./ledger.ts";
import { costOf, priceOf } from "./prices.ts";
import { kindOfPath, parseLine, type ParseState } from "./records.ts";

const claude = [
  { type: "user", uuid: "u1", timestamp: "2026-01-01T00:00:00Z", message: { role: "user", content: "hi" } },
  {
    type: "assistant",
    timestamp: "2026-01-01T00:00:01Z",
    message: {
      id: "msg_1",
      model: "claude-sonnet-4-5-20250929",
      usage: {
        input_tokens: 100,
        output_tokens: 1,
        cache_read_input_tokens: 1000,
        cache_creation_input_tokens: 10,
      },
    },
  },
  // The same message's next content block, with the final output count.
  {
    type: "assistant",
    timestamp: "2026-01-01T00:00:02Z",
    message: {
      id: "msg_1",
      model: "claude-sonnet-4-5-20250929",
      usage: {
        input_tokens: 100,
        output_tokens: 50,
        cache_read_input_tokens: 1000,
        cache_creation_input_tokens: 10,
      },
    },
  },
  {
    type: "user",
    uuid: "u2",
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "x" }] },
  },
].map((e) => JSON.stringify(e));

Deno.test("usage ledger: a Claude Code transcript read twice counts once", () => {
  const data = emptyLedger();
  data.panes.p = { key: "p", surface_id: 1, name: "cc", workspace: "w", agent: "claude" };
  for (let pass = 0; pass < 2; pass++) {
    for (const line of [...claude, "not json", "null"]) {
      addRecords(data, "p", parseLine("claude", line, {}, "s.jsonl"));
    }
  }
  const { total } = summarize(data, { by: "pane" });
  assert.equal(total.messages, 1);
  assert.equal(total.turns, 1);
  assert.deepEqual(
    [total.input_tokens, total.output_tokens, total.cache_read_tokens, total.cache_write_tokens],
    [100, 50, 1000, 10],
  );
  // 100 x 3 + 50 x 15 + 1000 x 0.3 + 10 x 3.75 per million.
  assert.equal(Math.round(total.cost_usd * 1e8) / 1e8, (300 + 750 + 300 + 37.5) / 1e6);
  assert.equal(total.cost_source, "prices");
});

Deno.test("usage ledger: Codex token_count events, repeated counts once", () => {
  const state: ParseState = {};
  const file = "rollout-2026-01-01T00-00-00-abc.jsonl";
  assert.equal(kindOfPath(`/x/${file}`), "codex");
  const lines = [
    { type: "turn_context", payload: { model: "gpt-5-codex" } },
    {
      type: "event_msg",
      payload: { type: "task_started", turn_id: "t1" },
      timestamp: "2026-01-01T00:00:00Z",
    },
    ...[1, 1, 2].map((n) => ({
      type: "event_msg",
      payload: {
        type: "token_count",
        info: {
          last_token_usage: { input_tokens: 10, cached_input_tokens: 4, output_tokens: 5, total_tokens: 15 },
          total_token_usage: {
            input_tokens: 10 * n,
            cached_input_tokens: 4 * n,
            output_tokens: 5 * n,
            total_tokens: 15 * n,
          },
        },
      },
    })),
  ].map((e) => JSON.stringify(e));
  const data = emptyLedger();
  data.panes.p = { key: "p", surface_id: 1, name: "cx", workspace: "w", agent: "codex" };
  for (const line of lines) addRecords(data, "p", parseLine("codex", line, state, file));
  const { total, groups } = summarize(data, { by: "model" });
  assert.deepEqual([total.messages, total.input_tokens, total.cache_read_tokens, total.output_tokens], [
    2,
    12,
    8,
    10,
  ]);
  assert.deepEqual([...groups.keys()], ["gpt-5-codex"]);
});

Deno.test("usage prices: longest prefix, config first, unknown models unpriced", () => {
  assert.equal(priceOf("claude-opus-4-5-20251101")?.input, 5);
  assert.equal(priceOf("claude-opus-4-1-20250805")?.input, 15);
  assert.equal(priceOf("mock-model"), null);
  assert.equal(costOf("mock-model", { input: 1, output: 1, cache_read: 0, cache_write: 0 }), null);
  assert.equal(
    costOf("mock-model", { input: 1e6, output: 0, cache_read: 1e6, cache_write: 0 }, {
      mock: { input: 2, output: 4 },
    }),
    4,
  );
});
