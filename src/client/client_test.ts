import assert from "node:assert/strict";
import { RpcError } from "../errors.ts";
import { memoryPair } from "../wire/_memory.ts";
import { ndjson } from "../wire/framing.ts";
import { Client } from "./client.ts";

const dec = new TextDecoder();

/** A scripted host on the other end: reads requests, answers as `serve` says. */
function fakeHost(
  serve: (req: { id: number; method: string }, write: (v: unknown) => Promise<void>) => void,
) {
  const [client, host] = memoryPair();
  const f = ndjson(host);
  (async () => {
    while (true) {
      const fr = await f.next();
      if (fr === null || !(fr instanceof Uint8Array)) break;
      const req = JSON.parse(dec.decode(fr));
      if (req.id === undefined) continue; // a notification (the client's system.hello): no reply
      serve(req, f.write);
    }
  })();
  return { client: new Client(client, "mem"), host };
}

Deno.test("client: replies are matched by id, out of order; notifications are kept apart", async () => {
  const held: { id: number; write: (v: unknown) => Promise<void> }[] = [];
  const { client, host } = fakeHost((req, write) => {
    if (req.method === "slow") held.push({ id: req.id, write });
    else {
      write({ jsonrpc: "2.0", method: "note", params: { before: req.method } });
      write({ jsonrpc: "2.0", id: req.id, result: { method: req.method } });
      for (const h of held.splice(0)) h.write({ jsonrpc: "2.0", id: h.id, result: { method: "slow" } });
    }
  });
  try {
    const slow = client.callAny("slow");
    const fast = client.callAny("fast");
    assert.deepEqual(await fast, { method: "fast" });
    assert.deepEqual(await slow, { method: "slow" });
    const note = await client.next();
    assert.deepEqual(note?.value, { jsonrpc: "2.0", method: "note", params: { before: "fast" } });
    assert.equal(await client.nextWithin(20), undefined);
  } finally {
    client.close();
    host.close();
  }
});

Deno.test("client: an error reply is an RpcError; a refusal with id null fails the pending call", async () => {
  const { client, host } = fakeHost((req, write) => {
    if (req.method === "bad") write({ jsonrpc: "2.0", id: req.id, error: { code: -32601, message: "nope" } });
    else {
      write({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Too many connections" } })
        .then(() => host.close());
    }
  });
  try {
    await assert.rejects(client.callAny("bad"), (e) => e instanceof RpcError && e.code === -32601);
    await assert.rejects(client.callAny("x"), (e) => e instanceof RpcError && e.code === -32000);
    assert.equal(await client.next(), null);
  } finally {
    client.close();
  }
});

Deno.test("client: subscribe() resolves on the ack, then events come from next()", async () => {
  const { client, host } = fakeHost((req, write) => {
    write({ type: "subscribed", id: req.id });
    write({ type: "surface_changed", surface_id: 1 });
  });
  try {
    const ack = await client.subscribe({ surfaces: [1] });
    assert.equal(ack.value.type, "subscribed");
    const ev = await client.next();
    assert.equal(ev?.text, '{"type":"surface_changed","surface_id":1}');
  } finally {
    client.close();
    host.close();
  }
});
