/**
 * A flow drives the real Claude Code (against the mock Messages API): a shell
 * step captures a value, an `agent = "claude"` step submits a prompt carrying
 * it through the submit transaction, and a ready barrier waits for the mock's
 * scripted reply on claude's screen.
 */
import assert from "node:assert/strict";
import { ensureClaude, prepareClaudeEnv } from "./_claude.ts";
import { withHost } from "./_harness.ts";
import { startMockAnthropic } from "./_mock_anthropic.ts";

Deno.test({
  name: "flow run: a submitted prompt with a captured variable reaches claude; its reply passes the barrier",
  async fn() {
    // The first run installs Claude Code (npm, about 10 s) before the clock below starts.
    const bin = await ensureClaude();
    const started = Date.now();
    const mock = await startMockAnthropic();
    const setup = await prepareClaudeEnv({ baseUrl: mock.url });
    try {
      const config = JSON.stringify({ agents: { claude: { command: bin } } });
      await withHost({ config }, async (host) => {
        mock.enqueue({ kind: "text", text: "DONE: ticket summarized." });
        const path = `${host.dir}/claude.flow.toml`;
        await Deno.writeTextFile(
          path,
          `
name = "with-claude"

[defaults]
timeout_secs = 30

[[step]]
id = "probe"
pane = { command = "sh -c 'echo TICKET=PF-4242; exec cat'" }
ready = { pattern = "^TICKET=" }
capture = { var = "ticket", lines = 1 }

[[step]]
id = "claude"
needs = ["probe"]
submit = true
pane = { agent = "claude", cwd = ${JSON.stringify(setup.projectDir)}, env = ${
            tomlTable(setup.env)
          }, prompt = "Summarize \${ticket}, then print DONE: and one sentence." }
# Claude draws "⏺ " before its text; the prompt line, which also holds "DONE:", must not match.
ready = { pattern = '^\\W*DONE:' }
capture = { var = "answer", lines = 1 }
`,
        );
        const r = await host.cli(["flow", "run", path, "--json"]);
        const report = JSON.parse(r.stdout || "{}");
        assert.equal(r.code, 0, `exit ${r.code}\n${r.stdout}\n--- stderr ---\n${r.stderr}`);
        assert.deepEqual(
          report.steps.map((s: { step: string; status: string }) => `${s.step} ${s.status}`),
          ["probe READY", "claude READY"],
        );
        // Through the agent's submit transaction, not typed blind.
        assert.equal(report.steps[1].submitted, "submitted");
        // The mock got the prompt with the capture substituted, once.
        const prompts = mock.prompts();
        assert.equal(prompts.length, 1, JSON.stringify(prompts.map((p) => p.prompt)));
        assert.equal(prompts[0].prompt, "Summarize TICKET=PF-4242, then print DONE: and one sentence.");
        assert.equal(prompts[0].answered, "text");
        assert.match(report.captures.answer, /^\W*DONE: ticket summarized\.$/);
        assert.equal(report.captures.ticket, "TICKET=PF-4242");
        assert.equal(mock.pending(), 0);
      });
    } finally {
      await mock.close();
      await setup.cleanup();
    }
    assert.ok(Date.now() - started < 40_000, `took ${Date.now() - started} ms`);
  },
});

/** An inline TOML table of strings. */
function tomlTable(env: Record<string, string>): string {
  return `{ ${Object.entries(env).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(", ")} }`;
}
