import assert from "node:assert/strict";
import { readPane, waitUntil, withHost } from "./_harness.ts";

Deno.test("a pane runs a real command and its output can be read", async () => {
  await withHost({}, async (host) => {
    const ws = await host.json<{ surface_id: number }>([
      "new",
      "--pane-name",
      "hello",
      "-c",
      "echo hi-from-pane; sleep 30",
    ]);
    assert.equal(ws.surface_id, 1);
    const text = await waitUntil("the echo to show", async () => {
      const t = await readPane(host, "hello");
      return t.includes("hi-from-pane") && t;
    });
    assert.equal(text.trim(), "hi-from-pane");
  });
});
