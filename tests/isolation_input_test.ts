/**
 * A closed pane's descriptor is never written again. A
 * 200 KB send into a pane that does not read waits in PtyInput's retry
 * loop; the pane is closed, and a new pane and a new client connection
 * (which may get the closed master's descriptor number) receive nothing.
 */
import assert from "node:assert/strict";
import { readPane, waitUntil, withHost } from "./_harness.ts";

async function openCall(socket: string, method: string, params: unknown) {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  const line = JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }) + "\n";
  const bytes = new TextEncoder().encode(line);
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
  const reply = (async () => {
    const buf = new Uint8Array(65536);
    let text = "";
    while (!text.includes("\n")) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    conn.close();
    return text ? JSON.parse(text) : null;
  })();
  return reply;
}

Deno.test("input: a send still retrying when its pane closes writes nothing into a later pane or connection", async () => {
  await withHost({ config: JSON.stringify({ host: { pane_workers: 1 } }) }, async (host) => {
    const a = await host.call("workspace.create", {
      pane_name: "sink",
      command: "exec sleep 600",
    });
    const line = "Q".repeat(79) + "\n";
    // 200 KB in four sends (one may carry 64 KB): they queue in the pane's input.
    const text = line.repeat(Math.ceil(50_000 / line.length));
    const sends = [1, 2, 3, 4].map(() =>
      openCall(host.socket, "surface.send_text", { surface_id: a.surface_id, text })
    );
    // The terminal echoes what it took until its input queue is full: the send is then retrying.
    await waitUntil(
      "the send to fill the sink's input",
      async () => (await readPane(host, "sink")).includes("QQQQ"),
    );
    await host.call("surface.close", { surface_id: a.surface_id });
    // The next open descriptors of the host: a pane's PTY master and a client socket.
    const conn = await Deno.connect({ transport: "unix", path: host.socket });
    const got: Uint8Array[] = [];
    const reading = (async () => {
      const buf = new Uint8Array(65536);
      while (true) {
        const n = await conn.read(buf).catch(() => null);
        if (n === null) break;
        got.push(buf.slice(0, n));
      }
    })();
    await host.call("workspace.create", { pane_name: "next", command: "cat" });
    const replies = await Promise.all(sends);
    // One more round trip, so that anything written meanwhile has arrived.
    await host.call("surface.send_text", { surface_id: 2, text: "MARK\n" });
    await waitUntil(
      "the marker on the next pane",
      async () => (await readPane(host, "next")).includes("MARK"),
    );
    const next = await readPane(host, "next");
    assert.ok(!next.includes("Q"), next);
    conn.close();
    await reading;
    assert.equal(got.reduce((n, c) => n + c.length, 0), 0, new TextDecoder().decode(got[0]));
    for (const reply of replies) {
      assert.ok(reply?.error, JSON.stringify(reply));
      assert.match(reply.error.message, /exited while being written to|has exited/);
    }
  });
});
