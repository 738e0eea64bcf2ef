import assert from "node:assert/strict";
import { Connection, stateKey } from "./connection.ts";

Deno.test("connection: a notification sent during a handler goes out after its reply", async () => {
  const out: unknown[] = [];
  const conn = new Connection("socket", (v) => {
    out.push(v);
    return Promise.resolve();
  });
  await conn.reply(() => {
    conn.notify("session.output", { n: 1 });
    return Promise.resolve({ jsonrpc: "2.0", id: 1, result: {} });
  });
  conn.notify("session.output", { n: 2 });
  await conn.send("flush");
  assert.deepEqual(out, [
    { jsonrpc: "2.0", id: 1, result: {} },
    { jsonrpc: "2.0", method: "session.output", params: { n: 1 } },
    { jsonrpc: "2.0", method: "session.output", params: { n: 2 } },
    "flush",
  ]);
});

Deno.test("connection: state is per connection and per key; close hooks run once, then state is gone", async () => {
  const key = stateKey("counter", () => ({ n: 0 }));
  const a = new Connection("socket", () => Promise.resolve());
  const b = new Connection("socket", () => Promise.resolve());
  assert.notEqual(a.id, b.id);
  a.state(key).n++;
  a.state(key).n++;
  assert.equal(a.state(key).n, 2);
  assert.equal(b.state(key).n, 0);
  let closes = 0;
  a.onClose(() => void closes++);
  const off = a.onClose(() => void closes++);
  off();
  await a.close();
  await a.close();
  assert.equal(closes, 1);
  assert.ok(a.closed);
  let late = false;
  a.onClose(() => void (late = true));
  await new Promise((r) => setTimeout(r, 0));
  assert.ok(late, "a hook added after close runs at once");
});
