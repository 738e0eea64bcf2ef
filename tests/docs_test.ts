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
