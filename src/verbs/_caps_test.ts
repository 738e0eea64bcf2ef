import assert from "node:assert/strict";
import { formatScope, parseCapsFlags } from "./_caps.ts";

Deno.test("--caps: words, selector lists, several per value, and clear errors", () => {
  assert.deepEqual(parseCapsFlags(["write=worker-*,reviewer read=workspace", "manage=none"]), {
    write: ["worker-*", "reviewer"],
    read: "workspace",
    manage: "none",
  });
  assert.deepEqual(parseCapsFlags(["submit=3"]), { submit: ["3"] });
  assert.throws(
    () => parseCapsFlags(["writ=all"]),
    /Unknown capability "writ" in --caps; one of read, write/,
  );
  assert.throws(() => parseCapsFlags(["write"]), /--caps takes <capability>=<scope>, got "write"/);
  assert.throws(() => parseCapsFlags(["write="]), /a scope is none, self, workspace, all or a comma list/);
  assert.throws(() => parseCapsFlags(["write=a,,b"]), /comma list/);
  assert.throws(() => parseCapsFlags(["write=all,x"]), /"all" stands alone/);
  assert.throws(() => parseCapsFlags(["read=self", "read=all"]), /gives "read" twice/);
  assert.equal(formatScope(["a", "b"]), "a,b");
  assert.equal(formatScope("all"), "all");
});
