import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { DEFAULT_SETTLE_MS, waitSpec } from "./wait.ts";

const base = { match: "web", idle: false, any: false, all: false, json: false };

Deno.test("waitSpec: what the options ask for, with the settle default and how it reads", () => {
  const spec = waitSpec({ ...base, pattern: "ready$", idle: true });
  assert.equal(spec.regex?.source, "ready$");
  assert.equal(spec.settle, DEFAULT_SETTLE_MS);
  assert.equal(spec.what, "pattern /ready$/ and idle");
  assert.equal(waitSpec({ ...base, idle: true, settle: 0 }).settle, 0);
  assert.equal(waitSpec({ ...base, idle: true }).what, "idle");
});

Deno.test("waitSpec: each bad combination is a usage error that names it", () => {
  const cases: [Parameters<typeof waitSpec>[0], RegExp][] = [
    [{ ...base, match: undefined, idle: true }, /^Missing --match <sel>/],
    [{ ...base }, /^Nothing to wait for/],
    [{ ...base, idle: true, any: true, all: true }, /^Options --any and --all exclude each other$/],
    [{ ...base, idle: true, timeout: 0 }, /^Option --timeout must be a positive number/],
    [{ ...base, idle: true, settle: -1 }, /^Option --settle must be zero or more/],
    [{ ...base, pattern: "(" }, /^Invalid --pattern: /],
  ];
  for (const [opts, message] of cases) {
    assert.throws(() => waitSpec(opts), (e) => e instanceof UsageError && message.test(e.message));
  }
});
