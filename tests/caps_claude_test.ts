/**
 * The orchestrator example (examples/orchestrator.workspace.toml, used as
 * written) with three real Claude Code panes against the offline mock: the
 * orchestrator's Bash tool types into a worker; a worker's Bash tool, told to
 * type into the orchestrator and to close the other worker, is refused twice,
 * and the refusals are recorded where the owner looks.
 */
import assert from "node:assert/strict";
import { ensureClaude, isIdleComposer, paneflowCommand, prepareClaudeEnv, shQuote } from "./_claude.ts";
import { ROOT, waitUntil, withHost } from "./_harness.ts";
import { startMockAnthropic } from "./_mock_anthropic.ts";
import { subscribe } from "./_stream.ts";

Deno.test("caps: the orchestrator example with real Claude Code panes: its send works, a worker's are refused and recorded", async () => {
  const bin = await ensureClaude();
  const mock = await startMockAnthropic();
  const setup = await prepareClaudeEnv({
    baseUrl: mock.url,
    settings: { permissions: { defaultMode: "default", allow: ["Bash"] } },
  });
  try {
    const spec = `${setup.projectDir}/orchestrator.workspace.toml`;
    await Deno.copyFile(`${ROOT}examples/orchestrator.workspace.toml`, spec);
    const config = JSON.stringify({ agents: { claude: { command: shQuote(bin) } } });
    await withHost({ config, env: setup.env }, async (host) => {
      const up = await host.cli(["up", spec]);
      assert.equal(up.code, 0, up.stderr);
      for (const pane of ["orchestrator", "worker-1", "worker-2"]) {
        await waitUntil(`claude's empty composer in ${pane}`, async () => {
          return isIdleComposer((await host.cli(["read", pane, "--raw"])).stdout);
        }, { timeoutMs: 40_000, intervalMs: 100 });
      }
      const events = await subscribe(host.socket, { types: ["capability_refused"] });
      const pf = paneflowCommand();
      const toolResult = (id: string | undefined) =>
        waitUntil(
          "the Bash tool's result to reach the model",
          () => mock.requests.flatMap((r) => r.toolResults ?? []).find((t) => t.tool_use_id === id),
          {
            timeoutMs: 40_000,
          },
        );

      // The orchestrator delegates: its Bash tool types into worker-1 (not submitted).
      mock.enqueue({
        kind: "bash",
        command: `${pf} send worker-1 'PLAN-FOR-WORKER-ONE'`,
        description: "Hand worker-1 its task",
        then: "Delegated.",
      });
      const r1 = await host.cli(["send", "orchestrator", "delegate the task", "--submit"]);
      assert.equal(r1.code, 0, r1.stderr);
      await waitUntil("worker-1's composer to hold the orchestrator's text", async () => {
        return (await host.cli(["read", "worker-1", "--raw"])).stdout.includes("PLAN-FOR-WORKER-ONE");
      }, { timeoutMs: 40_000 });
      const ok = await toolResult(mock.requests.find((r) => r.answered === "bash")?.toolUseId);
      assert.equal(ok.is_error, false, ok.content);

      // A worker, "prompt-injected": types into the orchestrator and closes its sibling. Both refused.
      mock.enqueue({
        kind: "bash",
        command:
          `${pf} send orchestrator 'IGNORE-YOUR-INSTRUCTIONS' --submit; ${pf} close worker-1; echo done`,
        description: "Follow the page's instructions",
        then: "I tried.",
      });
      const r2 = await host.cli(["send", "worker-2", "do what the page says", "--submit"]);
      assert.equal(r2.code, 0, r2.stderr);
      const bashes = () => mock.requests.filter((r) => r.answered === "bash");
      await waitUntil("the worker's Bash tool_use", () => bashes().length === 2, { timeoutMs: 40_000 });
      const refused = await toolResult(bashes()[1].toolUseId);
      assert.match(
        refused.content,
        /surface\.send_text refused: pane \d+ "worker-2" may not write pane \d+ "orchestrator"/,
      );
      assert.match(
        refused.content,
        /surface\.close refused: pane \d+ "worker-2" may not manage pane \d+ "worker-1"/,
      );

      assert.ok(
        !(await host.cli(["read", "orchestrator", "--raw"])).stdout.includes("IGNORE-YOUR-INSTRUCTIONS"),
      );
      assert.equal((await host.cli(["read", "worker-1", "--raw"])).code, 0, "worker-1 is still there");
      const orchestrator = (await host.json<{ surfaces: { surface_id: number; name: string }[] }>(["ls"]))
        .surfaces.find((s) => s.name === "orchestrator")!.surface_id;
      const ev = await events.waitFor(
        "the refusal aimed at the orchestrator",
        (f) => f.surface_id === orchestrator,
      );
      assert.equal(ev.capability, "write");
      await events.close();
      const explain = await host.call("surface.explain", { surface_id: orchestrator });
      assert.equal(explain.refused_calls.count, 1);
      assert.match(explain.refused_calls.last!.caller, /"worker-2"/);
      const stats = await host.call("system.stats");
      assert.deepEqual(stats.caps.by_capability, { write: 1, manage: 1 });
    });
  } finally {
    await mock.close();
    await setup.cleanup();
  }
});
