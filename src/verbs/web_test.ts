import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { parseListen } from "./web.ts";

Deno.test("web: --listen forms", () => {
  assert.deepEqual(parseListen("127.0.0.1:8080"), { hostname: "127.0.0.1", port: 8080 });
  assert.deepEqual(parseListen("[::1]:8080"), { hostname: "::1", port: 8080 });
  assert.deepEqual(parseListen(":8080"), { hostname: "127.0.0.1", port: 8080 });
  assert.deepEqual(parseListen("8080"), { hostname: "127.0.0.1", port: 8080 });
  assert.deepEqual(parseListen("0.0.0.0:0"), { hostname: "0.0.0.0", port: 0 });
  for (const bad of ["", "nowhere", "1.2.3.4:", "1.2.3.4:99999", "::1:80", "host:port", "a b:1"]) {
    assert.throws(() => parseListen(bad), UsageError, bad);
  }
});
