/**
 * The layout's rules (scripts/structure.ts): no import circles in src/, no
 * module over 600 lines, at most 10 modules directly in src/server/, no
 * stray root files, and which folder may import which.
 *
 * @module
 */
import assert from "node:assert/strict";
import { circles, folderCircles, importsOf, layerProblems, modules, problems } from "../scripts/structure.ts";
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

Deno.test("structure: src/ holds to the layout's rules", () => {
  assert.deepEqual(problems(), []);
});

Deno.test("structure: the web page's .js modules are held to the same rules", () => {
  const page = modules(`${ROOT}src`).filter((p) => p.includes("/src/web/page/"));
  assert.ok(page.some((p) => p.endsWith("/src/web/page/app.js")), page.join(", "));
  assert.ok(page.length > 5, "the page is split into modules");
  assert.deepEqual(importsOf(`${ROOT}src/web/page/layout.js`, 'import { el } from "./dom.js";'), [
    `${ROOT}src/web/page/dom.js`,
  ]);
});
