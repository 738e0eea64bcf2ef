/**
 * Queue delivery to the real Claude Code 2.1.328 against the offline mock
 * API (docs/paneio.md): a message to the pane named like the recipient is typed
 * through the submit transaction, and completes with the turn's final text
 * as `metadata.result`; the status file follows the agent. `ask` against
 * the same agent returns the reply up to the marker.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { ensureClaude } from "./_claude.ts";
import { waitUntil, withHost } from "./_harness.ts";
import { startAgent, waitStatus } from "./_agents.ts";

Deno.test("a queued task to Claude Code completes with the turn's final text", async () => {
  await ensureClaude();
  const root = await Deno.makeTempDir({ prefix: "pfq-" });
  try {
    await withHost({ config: JSON.stringify({ queue: { root } }) }, async (host) => {
      const cc = await startAgent(host, { name: "middle_manager", hooked: true });
      try {
        await waitStatus(
          host,
          "middle_manager",
          "hooked and idle",
          (s) => s.hooked && s.state === "idle",
          20_000,
        );
        cc.mock.enqueue({ kind: "text", text: "Analysis done: 3 findings." });
        const sent = await host.cli([
          "msg",
          "send",
          "--from",
          "grand_boss",
          "--to",
          "middle_manager",
          "Analyse the project and report.",
        ]);
        assert.equal(sent.code, 0, sent.stderr);
        const id = sent.stdout.trim();
        const w = await host.cli(["msg", "wait", id, "--timeout", "60"]);
        assert.equal(
          w.code,
          0,
          `${w.stderr}\n${(await host.cli(["read", "middle_manager", "--raw"])).stdout}`,
        );
        assert.equal(w.stdout, "Analysis done: 3 findings.\n");
        assert.deepEqual(cc.mock.prompts().map((p) => p.texts), [["Analyse the project and report."]]);
        const docs = parseAllDocuments(
          await Deno.readTextFile(`${root}/queue/grand_boss_to_middle_manager.yaml`),
        );
        const m = docs[0].toJS() as { status: string; metadata: Record<string, unknown> };
        assert.equal(m.status, "completed");
        assert.equal(m.metadata.result, "Analysis done: 3 findings.");
        const agents = await waitUntil("middle_manager's status file", async () => {
          const a = JSON.parse((await host.cli(["agents", "--json"])).stdout) as {
            agent_name: string;
            state: string;
            statistics: Record<string, number>;
          }[];
          const mm = a.find((x) => x.agent_name === "middle_manager");
          return mm?.state === "completed" && mm.statistics.tasks_completed === 1 ? mm : null;
        });
        assert.equal(agents.state, "completed");

        // ask against the agent: the reply up to the marker, through the submit transaction.
        cc.mock.enqueue({ kind: "text", text: "The answer is 42.\nDONE-7" });
        const r = await host.cli([
          "ask",
          "middle_manager",
          "What is the answer? End with DONE-7",
          "--marker",
          "DONE-7",
          "--timeout",
          "60",
        ]);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /The answer is 42\./);
        assert.doesNotMatch(r.stdout, /What is the answer/);
      } finally {
        await cc.dispose();
      }
    });
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});
