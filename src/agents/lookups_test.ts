import assert from "node:assert/strict";
import { methodFor } from "./hook.ts";
import { launchers } from "./launchers.ts";

// Lookups keyed by strings from clients (hook frames, up specs) must not find Object's members.
Deno.test("lookups: a tool, event or agent named after an Object member is unknown, not a crash", () => {
  for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
    assert.equal(methodFor(name), null, name);
    assert.equal(launchers({ agents: {} })[name], undefined, name);
  }
  assert.equal(methodFor("Stop"), "ai.stop");
  assert.equal(typeof launchers({ agents: {} }).claude, "string");
});
