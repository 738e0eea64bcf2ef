/**
 * The reference cannot drift: docs/protocol.md's method tables are what
 * scripts/protocol_docs.ts renders from src/spec/ now, and README.md stays a
 * page people read (at most 30 KB, its links to docs/ resolve).
 *
 * @module
 */
import assert from "node:assert/strict";
import { DOC, render, splice } from "../scripts/protocol_docs.ts";
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
