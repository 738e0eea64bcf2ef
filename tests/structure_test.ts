/**
 * The layout's rules (scripts/structure.ts): no import circles in src/, no
 * module over 600 lines, at most 10 modules directly in src/server/, no
 * stray root files.
 *
 * @module
 */
import assert from "node:assert/strict";
import { circles, importsOf, problems } from "../scripts/structure.ts";

Deno.test("structure: the circle finder finds circles, self-imports, and nothing in a tree", () => {
  const g = new Map([
    ["a", ["b"]],
    ["b", ["c"]],
    ["c", ["a", "d"]],
    ["d", []],
    ["e", ["e"]],
    ["f", ["d"]],
  ]);
  assert.deepEqual(circles(g), [["a", "b", "c"], ["e"]]);
  assert.deepEqual(circles(new Map([["x", ["y"]], ["y", []]])), []);
});

Deno.test("structure: imports are found in every form (type, multi-line, re-export, dynamic)", () => {
  const text = [
    'import type { A } from "./a.ts";',
    "import {\n  b,\n  c,\n} from '../nope' // not a double-quoted relative path",
    'import {\n  b,\n  c,\n} from "../b.ts";',
    'export { d } from "./d.ts";',
    'const e = await import("./e.ts");',
    'import { z } from "zod";',
  ].join("\n");
  assert.deepEqual(importsOf("/r/src/x/m.ts", text).sort(), [
    "/r/src/b.ts",
    "/r/src/x/a.ts",
    "/r/src/x/d.ts",
    "/r/src/x/e.ts",
  ]);
});

Deno.test("structure: src/ holds to the layout's rules", () => {
  assert.deepEqual(problems(), []);
});
