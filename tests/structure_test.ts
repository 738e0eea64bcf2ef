/**
 * The layout's rules (scripts/structure.ts): no import circles in src/, no
 * module over 600 lines, no named function over its cap, at most 10 modules
 * directly in src/server/, no stray root files, and which folder may import
 * which.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  circles,
  folderCircles,
  importsOf,
  layerProblems,
  longFunctions,
  MAX_FUNCTION_LINES,
  modules,
  problems,
} from "../scripts/structure.ts";
import { ROOT } from "./_harness.ts";

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

Deno.test("structure: each layer rule fails on a planted import and holds without it", () => {
  const src = "/r/src";
  const graph = (from: string, to: string) => new Map([[`${src}/${from}`, [`${src}/${to}`]]]);
  const planted: [string, string, RegExp][] = [
    [
      "core/registry.ts",
      "up/check.ts",
      /core\/ may import only core\/, spec\/, wire\/, src\/'s root modules/,
    ],
    ["core/pane/pool.ts", "session/mod.ts", /core\/ may import only/],
    ["spec/config.ts", "paneio/store.ts", /spec\/ may import only spec\//],
    ["wire/framing.ts", "client/client.ts", /wire\/ may import only wire\/, spec\//],
    ["client/ssh.ts", "remote/fleet.ts", /client\/ may import only/],
    ["errors.ts", "core/bus.ts", /src\/'s root modules may import only/],
    ["up/apply.ts", "server/context.ts", /src\/server\/ is the composition root/],
    ["verbs/flow.ts", "server/host.ts", /src\/server\/ is the composition root/],
    ["paneio/cli.ts", "verbs/msg.ts", /only verbs import src\/verbs\//],
  ];
  for (const [from, to, why] of planted) {
    const found = layerProblems(graph(from, to), src);
    assert.equal(found.length, 1, `${from} -> ${to}: ${found.join("; ")}`);
    assert.match(found[0], why);
    assert.match(found[0], new RegExp(`^src/${from} imports src/${to}`));
  }
  const allowed: [string, string][] = [
    ["verbs/serve.ts", "server/host.ts"],
    ["verbs/_flow_embedded.ts", "server/host.ts"],
    ["server/host.ts", "paneio/service.ts"],
    ["paneio/pane_access.ts", "core/registry.ts"],
    ["core/pane/env.ts", "spec/config.ts"],
    ["core/registry.ts", "errors.ts"],
    ["client/client.ts", "wire/framing.ts"],
    ["verbs/msg.ts", "paneio/cli.ts"],
  ];
  for (const [from, to] of allowed) {
    assert.deepEqual(layerProblems(graph(from, to), src), [], `${from} -> ${to}`);
  }
});

Deno.test("structure: folders that import each other in a circle are found", () => {
  const src = "/r/src";
  const g = new Map([
    [`${src}/agents/a.ts`, [`${src}/paneio/b.ts`, `${src}/agents/c.ts`]],
    [`${src}/paneio/b.ts`, [`${src}/core/d.ts`]],
    [`${src}/paneio/e.ts`, [`${src}/agents/c.ts`]],
    [`${src}/core/d.ts`, []],
  ]);
  assert.deepEqual(folderCircles(g, src), [["agents", "paneio"]]);
  g.delete(`${src}/paneio/e.ts`);
  assert.deepEqual(folderCircles(g, src), []);
});

/** A function of `lines` lines whose body holds braces and comments that a brace counter would trip on. */
function planted(head: string, lines: number, tail = ""): string {
  const body = Array.from({ length: lines - 2 }, (_, i) => `  x += "}${i}"; // }`);
  return [head, ...body, `}${tail}`].join("\n");
}

Deno.test("structure: a named function over the cap is found; one at the cap, or allowed, is not", async () => {
  const dir = await Deno.makeTempDir({ prefix: "paneflow-structure-test-" });
  try {
    const over = MAX_FUNCTION_LINES + 1;
    const parts = [
      'let x = "";',
      planted("export function tooLong() {", over),
      planted("export function atTheCap() {", MAX_FUNCTION_LINES),
      planted("export const arrow = () => {", over, ";"),
      `export const verb = {\n${planted("  run() {", over, ",")}\n};`,
      `export class Box {\n${planted("  #inside() {", over)}\n}`,
      // An anonymous callback counts toward the function that holds it, not on its own.
      planted("[1].map(() => {", over, ");"),
    ];
    // The line each part starts on (the member functions start one line further in).
    const starts = parts.map((_, i) => 1 + parts.slice(0, i).join("\n").split("\n").length - (i ? 0 : 1));
    await Deno.writeTextFile(`${dir}/long.ts`, parts.join("\n") + "\n");
    const paths = [`${dir}/long.ts`];
    const found = await longFunctions(paths, { root: `${dir}/`, allowed: {} });
    assert.deepEqual(found, [
      `long.ts:${starts[1]} function tooLong has ${over} lines (at most ${MAX_FUNCTION_LINES})`,
      `long.ts:${starts[3]} function arrow has ${over} lines (at most ${MAX_FUNCTION_LINES})`,
      `long.ts:${starts[4] + 1} function verb.run has ${over} lines (at most ${MAX_FUNCTION_LINES})`,
      `long.ts:${starts[5] + 1} function Box.#inside has ${over} lines (at most ${MAX_FUNCTION_LINES})`,
    ]);
    const allowed = {
      "long.ts: tooLong": "planted",
      "long.ts: verb.run": "planted",
      "long.ts: gone": "split",
    };
    assert.deepEqual(await longFunctions(paths, { root: `${dir}/`, allowed }), [
      found[1],
      found[3],
      `LONG_FUNCTIONS lists "long.ts: gone", which is no longer over ${MAX_FUNCTION_LINES} lines`,
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("structure: src/ holds to the layout's rules", async () => {
  assert.deepEqual(await problems(), []);
});

Deno.test("structure: the web page's .js modules are held to the same rules", () => {
  const page = modules(`${ROOT}src`).filter((p) => p.includes("/src/web/page/"));
  assert.ok(page.some((p) => p.endsWith("/src/web/page/app.js")), page.join(", "));
  assert.ok(page.length > 5, "the page is split into modules");
  assert.deepEqual(importsOf(`${ROOT}src/web/page/layout.js`, 'import { el } from "./dom.js";'), [
    `${ROOT}src/web/page/dom.js`,
  ]);
});
