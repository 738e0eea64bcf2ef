import assert from "node:assert/strict";
import { waitUntil, withHost } from "./_harness.ts";
import { ensureClaude, isIdleComposer, prepareClaudeEnv, shQuote } from "./_claude.ts";
import { startMockAnthropic } from "./_mock_anthropic.ts";

// A real client: Claude Code with the bridge registered by `paneflow mcp install`
// answers a (mock) model's tool_use of read_pane and sends back the pane's fenced text.
Deno.test("mcp: the real Claude Code reads a pane through the bridge that mcp install registered", async () => {
  const bin = await ensureClaude();
  const mock = await startMockAnthropic();
  const setup = await prepareClaudeEnv({
    baseUrl: mock.url,
    settings: { permissions: { defaultMode: "default", allow: ["mcp__paneflow__read_pane"] } },
  });
  try {
    await withHost({}, async (host) => {
      await host.json(["new", "--pane-name", "notes", "-c", "echo SECRET-PANE-TEXT-42; exec sleep 300"]);
      await waitUntil("the notes pane's text", async () => {
        const r = await host.cli(["read", "notes", "--raw"]);
        return r.stdout.includes("SECRET-PANE-TEXT-42");
      });

      const install = await host.cli(["mcp", "install", "--agent", "claude", "--json"], {
        env: { HOME: setup.home, CLAUDE_CONFIG_DIR: setup.configDir },
      });
      assert.equal(install.code, 0, install.stderr);
      const config = JSON.parse(await Deno.readTextFile(`${setup.configDir}/.claude.json`));
      assert.equal(config.mcpServers?.paneflow?.type, "stdio");
      assert.ok(config.hasCompletedOnboarding, "the rest of .claude.json is kept");

      mock.enqueue({
        kind: "tool",
        name: "mcp__paneflow__read_pane",
        input: { target: "notes", lines: 20 },
        then: "The notes pane says SECRET-PANE-TEXT-42.",
      });
      await host.json([
        "new",
        "--pane-name",
        "cc",
        // Claude reads "notes" in another workspace: a pane reads its own by default (docs/security.md).
        "--caps",
        "read=all",
        "--cwd",
        setup.projectDir,
        ...setup.envArgs,
        "-c",
        shQuote(bin),
      ]);
      await waitUntil("claude's empty input box", async () => {
        const r = await host.cli(["read", "cc", "--raw"]);
        return isIdleComposer(r.stdout);
      }, { timeoutMs: 30_000, intervalMs: 50 });

      const sent = JSON.parse(
        (await host.cli(["send", "cc", "what do my notes say?", "--submit", "--json"])).stdout,
      );
      assert.equal(sent.status, "submitted");

      const result = await waitUntil("the read_pane tool_result at the mock", () => {
        for (const r of mock.requests) {
          const hit = r.toolResults?.find((t) => t.content.includes("SECRET-PANE-TEXT-42"));
          if (hit) return hit;
        }
        return null;
      }, { timeoutMs: 30_000, intervalMs: 50 });
      assert.equal(result.is_error, false);
      const opens = result.content.match(/<untrusted_terminal_output id="[0-9a-f]+">/g) ?? [];
      const closes = result.content.match(/<\/untrusted_terminal_output>/g) ?? [];
      assert.equal(opens.length, 1, result.content);
      assert.equal(closes.length, 1, result.content);
      assert.ok(result.content.indexOf(opens[0]) < result.content.indexOf("SECRET-PANE-TEXT-42"));
      // Claude Code 2.1 defers MCP tools behind ToolSearch: they are named in the request, not in `tools`.
      const bodies = mock.requests.filter((r) => r.kind === "main").map((r) => JSON.stringify(r.body)).join(
        "\n",
      );
      for (const tool of ["list_panes", "read_pane", "search_pane"]) {
        assert.ok(bodies.includes(`mcp__paneflow__${tool}`), `Claude told the model about ${tool}`);
      }
      assert.ok(!/mcp__paneflow__(send|submit|split|focus|key)/.test(bodies), "no writing tools");
      await waitUntil("the follow-up answer on screen", async () => {
        const r = await host.cli(["read", "cc", "--raw"]);
        return r.stdout.includes("The notes pane says SECRET-PANE-TEXT-42.");
      }, { timeoutMs: 20_000 });
    });
  } finally {
    await mock.close();
    await setup.cleanup();
  }
});
