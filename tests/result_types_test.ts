/**
 * The result types type something: `deno check` refuses a handler that
 * answers the wrong shape and a verb that reads a result field that does not
 * exist, and accepts the same files written correctly. The files are planted
 * in a temporary directory inside the repository (so deno.json's imports
 * apply) and import the real modules: the handler table types of
 * src/server/methods/_types.ts and the client of src/client/client.ts.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ROOT, runCommand } from "./_harness.ts";

/** A handler of `surface.close` and `system.ping`, with `body` as the ping handler's answer. */
const handler = (ping: string) =>
  `import type { FamilyHandlers } from "../../src/server/methods/_types.ts";

export const handlers: Pick<FamilyHandlers<"surface">, "surface.close"> & Pick<FamilyHandlers<"system">, "system.ping"> = {
  "surface.close": (_ctx, p) => ({ closed: p.surface_id }),
  "system.ping": () => (${ping}),
};
`;

/** A verb body that calls `surface.read` and prints `field` of its result. */
const verb = (field: string) =>
  `import type { Client } from "../../src/client/client.ts";

export async function run(client: Client): Promise<number> {
  const r = await client.call("surface.read", { surface_id: 1, lines: 5 });
  console.log(r.text, r.${field});
  return 0;
}
`;

const CASES = {
  "handler_ok.ts": handler("{ pong: true, ts: Date.now() }"),
  // `ts` is a string where the schema says integer.
  "handler_wrong_type.ts": handler("{ pong: true, ts: String(Date.now()) }"),
  // `ts` is missing.
  "handler_missing_field.ts": handler("{ pong: true }"),
  "verb_ok.ts": verb("total_lines"),
  // surface.read has `total_lines`, not `total_line`.
  "verb_missing_field.ts": verb("total_line"),
};

Deno.test("result types: deno check refuses a wrong handler result and a missing result field, accepts the right ones", async () => {
  const dir = await Deno.makeTempDir({ dir: `${ROOT}tests`, prefix: ".result-types-" });
  try {
    for (const [name, text] of Object.entries(CASES)) await Deno.writeTextFile(`${dir}/${name}`, text);
    // One deno check for every file: each error names its file and line.
    const r = await runCommand(Deno.execPath(), ["check", `--config=${ROOT}deno.json`, dir], { cwd: ROOT });
    // deno colours its output even to a pipe: compare the text without the escapes.
    // deno-lint-ignore no-control-regex
    const out = (r.stdout + r.stderr).replaceAll(/\x1b\[[0-9;]*m/g, "");
    assert.notEqual(r.code, 0, out);
    const failing = new Set([...out.matchAll(/\.result-types-[^/]+\/(\w+\.ts):\d+:\d+/g)].map((m) => m[1]));
    assert.deepEqual(
      [...failing].sort(),
      ["handler_missing_field.ts", "handler_wrong_type.ts", "verb_missing_field.ts"],
      out,
    );
    assert.match(out, /Type 'string' is not assignable to type 'number'/);
    assert.match(out, /Property 'ts' is missing/);
    assert.match(out, /Property 'total_line' does not exist/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
