/**
 * The fixture-matrix test every agent's screen rules share: each screen
 * captured from the real CLI (tests/fixtures/<agent>/*.txt) → the rule that
 * matches it, the state, part of the message, and what the input box holds.
 *
 * @module
 */
import assert from "node:assert/strict";
import { classifyScreen, type ScreenRules } from "./classify.ts";

/** One captured screen: file (without .txt), rule, state, a part of the message, the composer's text. */
export type MatrixRow = [
  file: string,
  rule: string | null,
  state: string | null,
  message: string | null,
  composer: string | null,
];

/** Checks that `rows` name every fixture in `fixtures` once and that each classifies as captured. */
export async function checkFixtureMatrix(
  t: Deno.TestContext,
  fixtures: URL,
  rules: ScreenRules,
  composer: (lines: string[]) => string | null,
  rows: MatrixRow[],
): Promise<void> {
  const files = [...Deno.readDirSync(fixtures)].map((e) => e.name).filter((n) => n.endsWith(".txt"));
  assert.deepEqual(
    files.map((f) => f.slice(0, -4)).sort(),
    rows.map((m) => m[0]).sort(),
    "one row per fixture",
  );
  for (const [file, rule, state, message, text] of rows) {
    await t.step(file, () => {
      const screen = Deno.readTextFileSync(new URL(`${file}.txt`, fixtures));
      const verdict = classifyScreen(rules, screen);
      assert.equal(verdict?.rule ?? null, rule);
      assert.equal(verdict?.state ?? null, state);
      if (message) assert.ok(verdict?.message?.includes(message), `message: ${verdict?.message}`);
      else assert.equal(verdict?.message ?? null, null);
      assert.equal(composer(screen.split("\n")), text);
    });
  }
}
