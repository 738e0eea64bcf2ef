/**
 * The submit transaction against the real Claude Code 2.1.328 (docs/agents.md):
 * 50 consecutive `send --submit` to one hooked agent all report
 * `submitted`, and each of the 50 prompts reaches the mock API as its own
 * request (none lost, none folded into another); a prompt sent while the
 * agent is busy reports `queued` and still runs as its own turn.
 */
import assert from "node:assert/strict";
import { ensureClaude } from "./_claude.ts";
import { waitUntil, withHost } from "./_harness.ts";
import { percentile, spawnCli } from "./_stream.ts";
import { startAgent, status, submit, waitScreen, waitStatus } from "./_agents.ts";

const N = 50;

Deno.test("50 consecutive send --submit to Claude Code: all submitted, all 50 prompts reach the API", async (t) => {
  await ensureClaude();
  const started = Date.now();
  await withHost({}, async (host) => {
    const cc = await startAgent(host, { name: "cc", hooked: true });
    const watch = spawnCli(["watch", "--surface", "cc", "--type", "ai.stop"], host.env);
    const stops = () => watch.lines.slice(1).map((l) => JSON.parse(l) as Record<string, unknown>);
    try {
      await waitUntil("watch's ack", () => watch.lines.length >= 1);
      await waitStatus(host, "cc", "hooked and idle", (s) => s.hooked && s.state === "idle");

      await t.step(`${N} prompts, one turn each`, async () => {
        const elapsed: number[] = [];
        const turns: number[] = [];
        for (let i = 1; i <= N; i++) {
          cc.mock.enqueue({ kind: "text", text: `Reply ${i}.` });
          const t0 = performance.now();
          const r = await submit(host, "cc", `prompt number ${i}`);
          assert.equal(r.status, "submitted", `prompt ${i}: ${r.status} (${r.evidence})`);
          assert.equal(r.submitted, true);
          elapsed.push(r.elapsed_ms);
          // The turn ends (its Stop hook, seen on watch) before the next prompt goes out.
          await waitUntil(
            `the Stop hook of turn ${i}`,
            () => stops().some((f) => f.last_result === `Reply ${i}.`),
          );
          turns.push(performance.now() - t0);
        }
        const prompts = cc.mock.prompts();
        assert.equal(prompts.length, N, JSON.stringify(prompts.map((p) => p.texts)));
        // Each request carries exactly its own prompt: nothing folded into the next request.
        assert.deepEqual(
          prompts.map((p) => p.texts),
          Array.from({ length: N }, (_, i) => [`prompt number ${i + 1}`]),
        );
        assert.deepEqual(prompts.map((p) => p.answered), Array(N).fill("text"));
        assert.equal(cc.mock.requests.filter((r) => r.kind === "main").length, N, "no retries or repeats");
        assert.equal(cc.mock.pending(), 0);
        const s = await status(host, "cc");
        assert.equal(s.state, "finished");
        assert.equal(s.last_result, `Reply ${N}.`);
        const ms = (v: number) => Math.round(v);
        console.log(
          `send --submit elapsed_ms p50 ${ms(percentile(elapsed, 50))} p95 ${
            ms(percentile(elapsed, 95))
          } max ${ms(Math.max(...elapsed))}; submit to Stop hook p50 ${ms(percentile(turns, 50))} p95 ${
            ms(percentile(turns, 95))
          }`,
        );
      });

      await t.step(
        "a prompt sent while the agent is busy reports queued and runs as its own turn",
        async () => {
          const before = cc.mock.prompts().length;
          cc.mock.enqueue({ kind: "hold", text: "Working on the first.\n" }, {
            kind: "text",
            text: "The queued one.",
          });
          assert.equal((await submit(host, "cc", "first, held")).status, "submitted");
          await waitScreen(host, "cc", "the first answer", (s) => s.includes("Working on the first."));
          await waitStatus(host, "cc", "thinking", (s) => s.state === "thinking");
          const r = await submit(host, "cc", "queued while busy");
          assert.equal(r.status, "queued", r.evidence);
          assert.equal(r.submitted, true);
          await waitScreen(host, "cc", "Claude Code's queued notice", (s) => /Queued/.test(s));
          assert.equal(cc.mock.prompts().length, before + 1, "the queued prompt waits for the turn");
          cc.mock.release();
          await waitUntil(
            "the queued turn's Stop hook",
            () => stops().some((f) => f.last_result === "The queued one."),
          );
          assert.deepEqual(
            cc.mock.prompts().slice(before).map((p) => p.texts),
            [["first, held"], [
              "queued while busy",
            ]],
          );
        },
      );
    } finally {
      watch.kill();
      await watch.status;
      await cc.dispose();
    }
  });
  // A hang bound, not a speed claim (bench/ measures speed): 50 real turns take ~30 s on a quiet
  // machine and over 3 minutes beside other suites on 2 cores.
  const total = Date.now() - started;
  assert.ok(total < 360_000, `took ${total} ms`);
});
