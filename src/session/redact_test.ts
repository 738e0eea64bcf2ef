import assert from "node:assert/strict";
import { policyOf, redact } from "./redact.ts";
import { RpcError } from "../errors.ts";

Deno.test("default patterns keep the prefix and replace the secret", () => {
  assert.equal(redact("token: xyz789"), "token: [REDACTED]");
  assert.equal(redact("api_key=abc123 ok"), "api_key=[REDACTED] ok");
  assert.equal(redact("use sk-abcdefghijklmnop1234 now"), "use [REDACTED] now");
  assert.equal(redact("Bearer abcdefgh1234"), "Bearer [REDACTED]");
  assert.equal(redact("method token=super-secret-value"), "method token=[REDACTED]");
});

Deno.test("per-call rules: literals, regexes, enabled forced, redact:false wins", () => {
  const p = policyOf(undefined, { enabled: false, replacement: "[X]", extra_regexes: ["internal-[0-9]+"] });
  assert.equal(redact("internal-123 public", p), "[X] public");
  const q = policyOf(undefined, { enabled: true, replacement: "#", extra_literals: ["hunter2", ""] });
  assert.equal(redact("pw hunter2!", q), "pw #!");
  assert.equal(redact("token=abc", policyOf(false, undefined)), "token=abc");
  assert.throws(
    () => policyOf(undefined, { enabled: true, replacement: "x", extra_regexes: ["("] }),
    (e: unknown) =>
      e instanceof RpcError && e.code === -32602 && e.message.startsWith("invalid redaction regex `(`:"),
  );
});
