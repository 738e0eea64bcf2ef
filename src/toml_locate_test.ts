import assert from "node:assert/strict";
import { locateKeys } from "./toml_locate.ts";

const DOC = `# a workspace
name = "x"   # title
layout = 'even_h'
notes = """
[[panes]]
cwd = "not a key"
"""

[[panes]]
cwd = "~/a"
env = { PORT = "\${port_offset}", "QUOTED KEY" = 'v' }

[[panes]]
  name = "b"
  env.A = "1"

[panes.env]
B = "2"

[[panes]]
"agent" = "claude"
argv = [
  "a", # comment ]
  { k = 1 },
]
`;

Deno.test("locateKeys finds keys in tables, arrays of tables, inline tables and dotted keys", () => {
  const at = locateKeys(DOC);
  assert.deepEqual(at(["name"]), { line: 2, column: 1 });
  assert.deepEqual(at(["layout"]), { line: 3, column: 1 });
  assert.deepEqual(at(["panes"]), { line: 9, column: 1 });
  assert.deepEqual(at(["panes", 0]), { line: 9, column: 1 });
  assert.deepEqual(at(["panes", 0, "cwd"]), { line: 10, column: 1 });
  assert.deepEqual(at(["panes", 0, "env", "PORT"]), { line: 11, column: 9 });
  assert.deepEqual(at(["panes", 0, "env", "QUOTED KEY"]), { line: 11, column: 34 });
  assert.deepEqual(at(["panes", 1, "name"]), { line: 14, column: 3 });
  assert.deepEqual(at(["panes", 1, "env", "A"]), { line: 15, column: 7 });
  assert.deepEqual(at(["panes", 1, "env", "B"]), { line: 18, column: 1 });
  assert.deepEqual(at(["panes", 2, "agent"]), { line: 21, column: 1 });
  assert.deepEqual(at(["panes", 2, "argv", 1, "k"]), { line: 24, column: 5 });
});

Deno.test("locateKeys falls back to the nearest located parent, then to 1:1", () => {
  const at = locateKeys(DOC);
  assert.deepEqual(at(["panes", 1, "missing"]), { line: 13, column: 1 });
  assert.deepEqual(at(["nothing"]), { line: 1, column: 1 });
});

Deno.test("locateKeys handles an inline array of tables", () => {
  const at = locateKeys(`panes = [\n  { cwd = "a" },\n  { cwd = "b", name = "n" },\n]\n`);
  assert.deepEqual(at(["panes", 1, "name"]), { line: 3, column: 16 });
  assert.deepEqual(at(["panes", 1]), { line: 3, column: 3 });
});
