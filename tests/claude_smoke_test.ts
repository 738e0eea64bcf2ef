/**
 * The agent test harness works end to end: the real Claude Code (installed
 * from npm on first run), in a pane of a real host, against the mock
 * Messages API, driven by paneflow's own CLI verbs.
 */
import assert from "node:assert/strict";
import { ensureClaude, launchClaude } from "./_claude.ts";
import { readPane, waitUntil, withHost } from "./_harness.ts";
import { startMockAnthropic } from "./_mock_anthropic.ts";

Deno.test({
  name: "claude in a pane answers a prompt sent with paneflow send --submit",
  // The first run installs Claude Code (npm, about 10 s) before the clock below starts.
  async fn() {
    await ensureClaude();
    const started = Date.now();
    const mock = await startMockAnthropic();
    let cleanup = () => Promise.resolve();
    try {
      await withHost({}, async (host) => {
        const claude = await launchClaude(host, { baseUrl: mock.url, name: "cc" });
        cleanup = claude.setup.cleanup;
        mock.enqueue({ kind: "text", text: "Hello from the mock API." });
        const sent = await host.cli(["send", "cc", "hello", "--submit"]);
        assert.equal(sent.code, 0, sent.stderr);

        const request = await waitUntil("the prompt to reach the mock", () => mock.prompts()[0], {
          timeoutMs: 10_000,
        });
        assert.equal(request.prompt, "hello");
        assert.equal(request.stream, true);
        assert.equal(request.answered, "text");

        const screen = await waitUntil("the reply on screen", async () => {
          const text = await readPane(host, "cc");
          return text.includes("Hello from the mock API.") && text;
        }, { timeoutMs: 10_000 });
        assert.match(screen, /❯ hello/);
        assert.equal(mock.pending(), 0);
        // Everything claude asked of the API was a main-loop messages request.
        assert.deepEqual(mock.requests.map((r) => `${r.method} ${r.path} ${r.kind}`), [
          "POST /v1/messages main",
        ]);
      });
    } finally {
      await mock.close();
      await cleanup();
    }
    assert.ok(Date.now() - started < 30_000, `took ${Date.now() - started} ms`);
  },
});
