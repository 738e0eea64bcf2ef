/**
 * The reference cannot drift: docs/protocol.md's method tables are what
 * scripts/protocol_docs.ts renders from src/spec/ now, docs/configuration.md
 * names every key of the config schema (and no other), and README.md stays a
 * page people read (at most 30 KB, its links to docs/ resolve).
 *
 * @module
 */
import assert from "node:assert/strict";
import type { z } from "zod";
import { DOC, render, splice } from "../scripts/protocol_docs.ts";
import { ConfigSchema, parseConfig } from "../src/spec/config.ts";
import { ROOT } from "./_harness.ts";

Deno.test("docs: the protocol tables match src/spec/ (deno task docs regenerates them)", () => {
  const text = Deno.readTextFileSync(DOC);
  assert.equal(splice(text, render()), text, "docs/protocol.md is out of date: run deno task docs");
  for (const m of ["surface.read", "workspace.up", "events.subscribe", "ai.stop"]) {
    assert.ok(text.includes(`| \`${m}\` |`), `${m} is in the table`);
  }
});

Deno.test("docs: README.md is at most 30 KB and its docs/ links resolve", () => {
  const readme = Deno.readTextFileSync(`${ROOT}README.md`);
  assert.ok(new TextEncoder().encode(readme).length <= 30 * 1024, "README.md is over 30 KB");
  const links = [...readme.matchAll(/\]\((docs\/[^)#]+)/g)].map((m) => m[1]);
  assert.ok(links.length >= 8, "the README indexes the reference");
  for (const link of links) assert.ok(Deno.statSync(`${ROOT}${link}`).isFile, `${link} exists`);
});

Deno.test("docs: every src/ file the README and docs/ name exists", () => {
  const files = [
    `${ROOT}README.md`,
    ...[...Deno.readDirSync(`${ROOT}docs`)].map((e) => `${ROOT}docs/${e.name}`),
  ];
  for (const file of files) {
    for (const m of Deno.readTextFileSync(file).matchAll(/\bsrc\/[\w/]+\.ts\b/g)) {
      let found = true;
      try {
        Deno.statSync(`${ROOT}${m[0]}`);
      } catch {
        found = false;
      }
      assert.ok(found, `${file.slice(ROOT.length)} names ${m[0]}, which does not exist`);
    }
  }
});

/**
 * Every key a config file may hold, dotted (`terminal.kill_grace_ms`); a
 * record's keys are the user's, written `<name>` (`hosts.<name>.ssh`), and a
 * record of plain values is one key (`terminal.env`).
 */
function configKeys(schema: z.core.$ZodType, at = ""): string[] {
  const def = schema._zod.def;
  if (
    def.type === "default" || def.type === "prefault" || def.type === "optional" || def.type === "nullable"
  ) {
    return configKeys((def as z.core.$ZodDefaultDef).innerType, at);
  }
  // A preprocessed section (`"restore": "on"` for `"restore": { "mode": "on" }`): the keys of what it becomes.
  if (def.type === "pipe") return configKeys((def as z.core.$ZodPipeDef).out, at);
  if (def.type === "object") {
    const shape = (def as z.core.$ZodObjectDef).shape;
    return Object.entries(shape).flatMap(([key, value]) => configKeys(value, at ? `${at}.${key}` : key));
  }
  if (def.type === "record") {
    const inner = configKeys((def as z.core.$ZodRecordDef).valueType, `${at}.<name>`);
    return inner.length === 1 && inner[0] === `${at}.<name>` ? [at] : inner;
  }
  return [at];
}

Deno.test("docs: configuration.md names every key of the config schema, and its example loads", () => {
  const text = Deno.readTextFileSync(`${ROOT}docs/configuration.md`);
  const keys = configKeys(ConfigSchema);
  for (const k of ["terminal.kill_grace_ms", "hosts.<name>.ssh", "paneio.prompt_patterns", "queue.root"]) {
    assert.ok(keys.includes(k), `the schema walk finds ${k} (found: ${keys.join(", ")})`);
  }
  const table = text.slice(text.indexOf("## Every key"));
  const named = [...table.matchAll(/^\| `([^`]+)` +\|/gm)].map((m) => m[1]);
  const missing = keys.filter((k) => !named.includes(k));
  assert.deepEqual(missing, [], `docs/configuration.md's key table lacks ${missing.join(", ")}`);
  const unknown = named.filter((k) => !keys.includes(k));
  assert.deepEqual(
    unknown,
    [],
    `docs/configuration.md's key table names keys the schema lacks: ${unknown.join(", ")}`,
  );
  // The example file is a config the host would load.
  const example = text.match(/```jsonc\n([\s\S]*?)```/);
  assert.ok(example, "the page shows an example config");
  parseConfig(example[1], "docs/configuration.md");
});
