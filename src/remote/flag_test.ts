import assert from "node:assert/strict";
import { takeHostFlag } from "./flag.ts";

Deno.test("takeHostFlag: before or after the verb, = form, never after --", () => {
  assert.deepEqual(takeHostFlag(["--host", "box", "ls", "--all"]), { host: "box", argv: ["ls", "--all"] });
  assert.deepEqual(takeHostFlag(["read", "web", "--host=ssh://a@b:2", "--lines", "3"]), {
    host: "ssh://a@b:2",
    argv: ["read", "web", "--lines", "3"],
  });
  assert.deepEqual(takeHostFlag(["send", "p", "--", "--host", "x"]), {
    host: null,
    argv: ["send", "p", "--", "--host", "x"],
  });
  assert.throws(() => takeHostFlag(["ls", "--host"]), /--host needs a value/);
  assert.throws(() => takeHostFlag(["ls", "--host", "--all"]), /--host needs a value/);
});
