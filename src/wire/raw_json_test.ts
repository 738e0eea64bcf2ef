import assert from "node:assert/strict";
import { encodeJson, RAW_HEADROOM, RawJson, transferOf } from "./raw_json.ts";
import { encodeLine, encodeLsp } from "./framing.ts";

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
