import assert from "node:assert/strict";
import { encodeJson, RAW_HEADROOM, RawBuffers, RawJson, transferOf } from "./raw_json.ts";
import { encodeLine, encodeLsp, writeJson } from "./framing.ts";

const dec = new TextDecoder();
const RESULT = { matched: true, text: 'naïve 宽 👍 "q" \\ \n', n: 3 };

Deno.test("an encoded result goes out framed around its bytes, in both framings", () => {
  const json = JSON.stringify(RESULT);
  const line = encodeLine({ jsonrpc: "2.0", id: 7, result: new RawJson(encodeJson(json)) });
  assert.deepEqual(JSON.parse(dec.decode(line)), { jsonrpc: "2.0", id: 7, result: RESULT });
  assert.equal(dec.decode(line).endsWith("}\n"), true);

  const lsp = dec.decode(encodeLsp({ jsonrpc: "2.0", id: "x", result: new RawJson(encodeJson(json)) }));
  const m = /^Content-Length: (\d+)\r\n\r\n/.exec(lsp)!;
  const body = new TextEncoder().encode(lsp).subarray(m[0].length);
  assert.equal(body.length, Number(m[1]));
  assert.deepEqual(JSON.parse(dec.decode(body)), { jsonrpc: "2.0", id: "x", result: RESULT });
});

Deno.test("a head larger than the room, or a second frame, is copied and still exact", () => {
  const raw = new RawJson(encodeJson(JSON.stringify(RESULT)));
  const longId = "i".repeat(RAW_HEADROOM * 2);
  const first = dec.decode(encodeLine({ jsonrpc: "2.0", id: longId, result: raw }));
  assert.deepEqual(JSON.parse(first), { jsonrpc: "2.0", id: longId, result: RESULT });
  const a = encodeLine({ jsonrpc: "2.0", id: 1, result: raw });
  const b = encodeLine({ jsonrpc: "2.0", id: 22, result: raw });
  assert.deepEqual(JSON.parse(dec.decode(a)).id, 1);
  assert.deepEqual(JSON.parse(dec.decode(b)).id, 22);
  assert.deepEqual(JSON.parse(raw.text), RESULT);
});

Deno.test("text mostly outside ASCII still encodes whole", () => {
  const text = JSON.stringify({ s: "宽".repeat(5000) });
  const e = encodeJson(text);
  assert.equal(dec.decode(e.buf.subarray(RAW_HEADROOM, e.end)), text);
  assert.deepEqual(transferOf({ ok: true, json: e }), [e.buf.buffer]);
  assert.deepEqual(transferOf({ ok: false }), []);
});

Deno.test("a written result's buffer goes back once, and a reused buffer frames exact bytes", async () => {
  const pool = new RawBuffers();
  const back: ArrayBuffer[] = [];
  const conn = {
    read: () => Promise.resolve(null),
    write: (p: Uint8Array) => Promise.resolve(p.length),
    close() {},
  };
  const first = encodeJson(JSON.stringify({ a: "x".repeat(1000) }));
  const raw = new RawJson(first, (b) => back.push(b));
  await writeJson(conn, { jsonrpc: "2.0", id: 1, result: raw });
  assert.equal(back.length, 1);
  assert.equal(back[0], first.buf.buffer);
  assert.throws(() => raw.text, /released/);
  raw.release(); // once only
  assert.equal(back.length, 1);

  // The same memory, stale bytes and all, carries the next (shorter) result exactly.
  pool.give(back[0]);
  const buf = pool.take(1000);
  assert.equal(buf.buffer, back[0]);
  const json = JSON.stringify({ b: 1 });
  buf.set(new TextEncoder().encode(json), RAW_HEADROOM);
  const line = encodeLine({
    jsonrpc: "2.0",
    id: 2,
    result: new RawJson({ buf, end: RAW_HEADROOM + json.length }),
  });
  assert.deepEqual(JSON.parse(dec.decode(line)), { jsonrpc: "2.0", id: 2, result: { b: 1 } });
  // Far too big for the request, or too small: a new buffer.
  pool.give(new ArrayBuffer(10_000));
  assert.notEqual(pool.take(100).byteLength, 10_000);
  assert.equal(pool.take(20_000).byteLength, 20_000);
});
