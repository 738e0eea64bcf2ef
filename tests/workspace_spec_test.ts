/**
 * The workspace spec corpus: every `tests/fixtures/workspace/valid/*.toml`
 * resolves to its sibling `.json`; every `invalid/*.toml` fails with exactly
 * the text of its sibling `.err` (`{dir}` stands for the fixture directory).
 */
import assert from "node:assert/strict";
import { DEFAULT_LAUNCHERS } from "../src/agents/launchers.ts";
import { findRepoRoot, parseWorkspaceToml, WorkspaceSpecError } from "../src/up/check.ts";
import { ROOT } from "./_harness.ts";

const BASE = `${ROOT}tests/fixtures/workspace`;

async function tomlFiles(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) if (e.isFile && e.name.endsWith(".toml")) names.push(e.name);
  return names.sort();
}

function envFor(dir: string) {
  const vars: Record<string, string> = { HOME: dir, FIXTURE_DIR: dir };
  return { get: (k: string) => vars[k] };
}

Deno.test("workspace spec corpus: valid files resolve, invalid files give their exact errors", async (t) => {
  const agents = Object.keys(DEFAULT_LAUNCHERS);
  const validDir = Deno.realPathSync(`${BASE}/valid`);
  const repo = findRepoRoot(validDir);
  for (const name of await tomlFiles(validDir)) {
    await t.step(`valid/${name}`, async () => {
      const path = `${validDir}/${name}`;
      const parsed = await parseWorkspaceToml(await Deno.readTextFile(path), {
        path,
        display: name,
        env: envFor(validDir),
        agents,
      });
      let got = JSON.stringify(parsed.workspace).replaceAll(validDir, "{dir}");
      if (repo) got = got.replaceAll(repo, "{repo}");
      const want = JSON.stringify(JSON.parse(await Deno.readTextFile(path.replace(/\.toml$/, ".json"))));
      assert.equal(got, want);
      // The params sent to the host carry absolute, canonical directories.
      for (const p of parsed.spec.panes) assert.ok(p.cwd?.startsWith("/"), `cwd ${p.cwd} is absolute`);
    });
  }
  const invalidDir = Deno.realPathSync(`${BASE}/invalid`);
  for (const name of await tomlFiles(invalidDir)) {
    await t.step(`invalid/${name}`, async () => {
      const path = `${invalidDir}/${name}`;
      const want = (await Deno.readTextFile(path.replace(/\.toml$/, ".err"))).trimEnd()
        .replaceAll("{dir}", invalidDir);
      const err = await parseWorkspaceToml(await Deno.readTextFile(path), {
        path,
        display: name,
        env: envFor(invalidDir),
        agents,
      }).then(() => null, (e) => e);
      assert.ok(err instanceof WorkspaceSpecError, `${name} must be rejected (got ${err})`);
      assert.equal(err.message, want);
    });
  }
});
