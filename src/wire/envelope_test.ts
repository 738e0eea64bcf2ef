import assert from "node:assert/strict";
import { parseEnvelope } from "./envelope.ts";

function invalid(id: unknown, message: string) {
  return { jsonrpc: "2.0", id, error: { code: -32600, message } };
}

Deno.test("parseEnvelope accepts a request and a notification", () => {
  assert.deepEqual(parseEnvelope({ jsonrpc: "2.0", id: 1, method: "system.ping", params: { a: 1 } }), {
    id: 1,
    method: "system.ping",
    params: { a: 1 },
    notification: false,
  });
  assert.deepEqual(parseEnvelope({ jsonrpc: "2.0", id: "abc", method: "m" }), {
    id: "abc",
    method: "m",
    params: {},
    notification: false,
  });
  assert.deepEqual(parseEnvelope({ jsonrpc: "2.0", method: "m", params: {} }), {
    id: null,
    method: "m",
    params: {},
    notification: true,
  });
  // An explicit null id is a request (answered with id null), not a notification.
  assert.deepEqual(parseEnvelope({ jsonrpc: "2.0", id: null, method: "m", params: null }), {
    id: null,
    method: "m",
    params: {},
    notification: false,
  });
  assert.deepEqual(parseEnvelope({ jsonrpc: "2.0", id: 0, method: "m" }), {
    id: 0,
    method: "m",
    params: {},
    notification: false,
  });
  assert.equal((parseEnvelope({ jsonrpc: "2.0", id: -1.5, method: "m" }) as { id: unknown }).id, -1.5);
});

Deno.test("parseEnvelope: anything but an object is -32600 with id null", () => {
  for (const value of [null, undefined, 1, "x", true, [], [{ jsonrpc: "2.0", id: 1, method: "m" }]]) {
    assert.deepEqual(
      parseEnvelope(value),
      invalid(null, "Invalid request: expected a JSON-RPC 2.0 object"),
      JSON.stringify(value),
    );
  }
});

Deno.test("parseEnvelope: a bad id is -32600 with id null", () => {
  for (const id of [true, {}, [1], Infinity, NaN]) {
    assert.deepEqual(
      parseEnvelope({ jsonrpc: "2.0", id, method: "m" }),
      invalid(null, `Invalid request: "id" must be a string, number or null`),
      String(id),
    );
  }
});

Deno.test("parseEnvelope: a bad jsonrpc, method or params keeps the id", () => {
  for (const jsonrpc of [undefined, "1.0", 2, "2"]) {
    assert.deepEqual(
      parseEnvelope({ jsonrpc, id: 7, method: "m" }),
      invalid(7, `Invalid request: "jsonrpc" must be "2.0"`),
    );
  }
  for (const method of [undefined, "", 3, null, ["m"]]) {
    assert.deepEqual(
      parseEnvelope({ jsonrpc: "2.0", id: "q", method }),
      invalid("q", `Invalid request: "method" must be a non-empty string`),
    );
  }
  for (const params of ["x", 3, true]) {
    assert.deepEqual(
      parseEnvelope({ jsonrpc: "2.0", id: 8, method: "m", params }),
      invalid(8, `Invalid request: "params" must be an object`),
    );
  }
  // Without an id the error still answers with id null.
  assert.deepEqual(
    parseEnvelope({ jsonrpc: "1.0", method: "m" }),
    invalid(null, `Invalid request: "jsonrpc" must be "2.0"`),
  );
});
