/**
 * The usage ledger's cost per turn (docs/usage.md): parsing a turn's new
 * transcript lines, adding them to a ledger that already holds `--turns`
 * turns, and the summary `usage.get`, `ps` and the budget check compute after
 * it. Pure CPU, no host: `deno run -A bench/usage.ts [--turns 5000]`.
 *
 * @module
 */
import { addRecords, emptyLedger, summarize } from "../src/usage/ledger.ts";
import { parseLine } from "../src/usage/records.ts";

const turns = Number(Deno.args[Deno.args.indexOf("--turns") + 1]) || 5000;
const PANES = 20;

/** One turn of Claude Code's transcript: the prompt, a tool call, its result and the answer (3 lines per message). */
function turnLines(t: number): string[] {
  const at = new Date(Date.UTC(2026, 0, 1) + t * 1000).toISOString();
  const lines = [
    JSON.stringify({ type: "user", uuid: `u${t}`, timestamp: at, message: { content: "do it" } }),
  ];
  for (let m = 0; m < 2; m++) {
    const usage = {
      input_tokens: 25,
      output_tokens: 40,
      cache_read_input_tokens: 20_000,
      cache_creation_input_tokens: 500,
    };
    for (let block = 0; block < 3; block++) {
      lines.push(JSON.stringify({
        type: "assistant",
        timestamp: at,
        message: {
          id: `msg_${t}_${m}`,
          model: "claude-sonnet-4-5",
          usage,
          content: [{ type: "text", text: "x".repeat(200) }],
        },
      }));
    }
  }
  return lines;
}

const data = emptyLedger();
for (let p = 0; p < PANES; p++) {
  data.panes[`r:${p}`] = { key: `r:${p}`, surface_id: p + 1, name: null, workspace: "w", agent: "claude" };
}
for (let t = 0; t < turns; t++) {
  for (const line of turnLines(t)) {
    addRecords(data, `r:${t % PANES}`, parseLine("claude", line, {}, "f.jsonl"));
  }
}
const samples: number[] = [];
for (let t = turns; t < turns + 200; t++) {
  const t0 = performance.now();
  for (const line of turnLines(t)) {
    addRecords(data, `r:${t % PANES}`, parseLine("claude", line, {}, "f.jsonl"));
  }
  summarize(data, { by: "pane", pane: (p) => p.key === `r:${t % PANES}` });
  samples.push(performance.now() - t0);
}
samples.sort((a, b) => a - b);
const q = (f: number) => samples[Math.floor(f * (samples.length - 1))].toFixed(3);
console.log(
  `usage ledger: ${turns} turns (${Object.keys(data.messages).length} messages) held; per new turn: ` +
    `p50 ${q(0.5)} ms, p99 ${q(0.99)} ms (parse, add, one pane's summary)`,
);
