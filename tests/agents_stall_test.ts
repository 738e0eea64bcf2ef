import assert from "node:assert/strict";
import { withHost } from "./_harness.ts";
import { startAgent, submit, waitStatus } from "./_agents.ts";

// A turn whose request hangs: the spinner keeps animating, but nothing new
// reaches the transcript and no hook fires, so the turn becomes `stalled`
// after agent_stall_threshold_secs, and leaves it when the answer streams.
for (const hooked of [true, false]) {
  Deno.test(`agents: a hung turn becomes stalled and recovers (${hooked ? "hooks" : "screen only"})`, async () => {
    await withHost({ config: '{"agent_stall_threshold_secs": 2}' }, async (host) => {
      const agent = await startAgent(host, { name: "hung", hooked });
      try {
        agent.mock.enqueue({ kind: "hold", text: "Thinking about it.\n", after: "Done at last." });
        const sent = await submit(host, "hung", "take your time");
        assert.equal(sent.status, "submitted");
        await waitStatus(host, "hung", "thinking", (s) => s.state === "thinking");
        const stalled = await waitStatus(host, "hung", "stalled", (s) => s.state === "stalled", 15_000);
        assert.match(stalled.reason, /no output or hook for \d+ s in a turn/);
        assert.ok(stalled.idle_ms >= 2000, `idle_ms ${stalled.idle_ms} counts the silence`);
        agent.mock.release();
        await waitStatus(
          host,
          "hung",
          "the turn to finish",
          (s) => s.state === "finished" || (!hooked && s.state === "idle"),
          15_000,
        );
      } finally {
        await agent.dispose();
      }
    });
  });
}
