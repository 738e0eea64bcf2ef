/**
 * The flow spec corpus, through the real CLI: every
 * `tests/fixtures/flow/invalid/*.toml` makes `paneflow flow validate <file>`
 * (run in its directory, so paths are relative) exit 2 with exactly the stderr
 * of its sibling `.err` and nothing on stdout; every `valid/*.toml` validates,
 * and `flow run --dry-run --json` prints the plan of its sibling `.json`.
 * `{dir}` in an expected text stands for the fixture directory.
 */
import assert from "node:assert/strict";
import { ROOT, runCli, type RunResult } from "./_harness.ts";

const BASE = `${ROOT}tests/fixtures/flow`;
const CONCURRENCY = 8;

async function tomlFiles(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) if (e.isFile && e.name.endsWith(".toml")) names.push(e.name);
  return names.sort();
}

/**
 * Runs `paneflow <args>` in `cwd` with no host, no user config and the write
 * gate open; `${tmp}/bin` (stand-in agents, see {@link standIns}) comes first on PATH.
 */
function cli(args: string[], cwd: string, tmp: string): Promise<RunResult> {
  const env = {
    PATH: `${tmp}/bin:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    HOME: Deno.env.get("HOME") ?? tmp,
    PANEFLOW_CONFIG: `${tmp}/no-config.jsonc`,
    PANEFLOW_SOCKET_PATH: `${tmp}/no-host.sock`,
    PANEFLOW_IPC_SCRIPTING: "1",
    NO_COLOR: "1",
  };
  return runCli(args, env, undefined, { cwd, clearEnv: true });
}

/** Stand-in `claude` and `codex` programs: flows check that an agent's program is on PATH. */
async function standIns(tmp: string): Promise<void> {
  await Deno.mkdir(`${tmp}/bin`);
  for (const name of ["claude", "codex", "gemini", "opencode"]) {
    await Deno.writeTextFile(`${tmp}/bin/${name}`, "#!/bin/sh\nexec cat\n", { mode: 0o755 });
  }
}

/** Starts the jobs at most `CONCURRENCY` at a time; the promises keep the jobs' order. */
function limited<T>(jobs: (() => Promise<T>)[]): Promise<T>[] {
  let active = 0;
  const queue: (() => void)[] = [];
  const acquire = () =>
    active < CONCURRENCY ? (active++, Promise.resolve()) : new Promise<void>((r) => queue.push(r));
  const release = () => {
    const next = queue.shift();
    if (next) next();
    else active--;
  };
  return jobs.map(async (job) => {
    await acquire();
    try {
      return await job();
    } finally {
      release();
    }
  });
}

Deno.test("flow spec corpus: invalid files give their exact errors, valid files their plans", async (t) => {
  const tmp = await Deno.makeTempDir({ prefix: "pf-flowspec-" });
  try {
    await standIns(tmp);
    const invalidDir = Deno.realPathSync(`${BASE}/invalid`);
    const validDir = Deno.realPathSync(`${BASE}/valid`);
    const invalid = await tomlFiles(invalidDir);
    const valid = await tomlFiles(validDir);
    assert.ok(invalid.length >= 20 && valid.length >= 3, "the corpus is there");
    // Start every CLI run at once (a few at a time), then check them in order.
    const runs = limited([
      ...invalid.map((name) => () => cli(["flow", "validate", name], invalidDir, tmp)),
      ...valid.map((name) => () => cli(["flow", "validate", name], validDir, tmp)),
      ...valid.map((name) => () => cli(["flow", "run", "--dry-run", "--json", name], validDir, tmp)),
    ]);
    let n = 0;
    for (const name of invalid) {
      const run = runs[n++];
      await t.step(`invalid/${name}`, async () => {
        const want = (await Deno.readTextFile(`${invalidDir}/${name.replace(/\.toml$/, ".err")}`))
          .replaceAll("{dir}", invalidDir);
        const r = await run;
        assert.equal(r.stderr, want);
        assert.equal(r.stdout, "");
        assert.equal(r.code, 2);
      });
    }
    const validated = valid.map(() => runs[n++]);
    const planned = valid.map(() => runs[n++]);
    for (const [i, name] of valid.entries()) {
      await t.step(`valid/${name}`, async () => {
        const v = await validated[i];
        assert.equal(v.stderr, "");
        assert.match(v.stdout, new RegExp(`^${name.replace(".", "\\.")}: ok \\(\\d+ steps?\\)\\n$`));
        assert.equal(v.code, 0);
        const p = await planned[i];
        assert.equal(p.stderr, "");
        assert.equal(p.code, 0);
        const want = JSON.parse(
          (await Deno.readTextFile(`${validDir}/${name.replace(/\.toml$/, ".json")}`)).replaceAll(
            "{dir}",
            validDir,
          ),
        );
        assert.deepEqual(JSON.parse(p.stdout), want);
      });
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
