import assert from "node:assert/strict";
import { mayRedact, policyOf, redact } from "./redact.ts";
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

Deno.test("mayRedact: false only when no default pattern, literal or row of the text can match", () => {
  const d = policyOf(undefined, undefined)!;
  for (
    const secret of ["token=abc", "Bearer abcdefgh1234", "sk-abcdefghijklmnop1234", "PASSWD: x", "apikey=1"]
  ) {
    assert.equal(redact(secret) !== secret, true, secret);
    assert.equal(mayRedact(`before\n${secret}\nafter`, d), true, secret);
  }
  assert.equal(mayRedact("build ok: 12 files\n✓ all tests passed", d), false);
  const lit = policyOf(undefined, { enabled: true, replacement: "#", extra_literals: ["hunter2"] })!;
  assert.equal(mayRedact("pw hunter2!", lit), true);
  assert.equal(mayRedact("pw hunter3!", lit), false);
  // A caller's regex is not looked into.
  const re = policyOf(undefined, { enabled: true, replacement: "#", extra_regexes: ["nothing-here"] })!;
  assert.equal(mayRedact("plain", re), true);
});
