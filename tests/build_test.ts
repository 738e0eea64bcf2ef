/**
 * The bundled CLI (`deno task build`): every kind of verb works through it
 * against a real host, errors keep their exit codes across the bundle's
 * copies of the error classes, and a light verb that imports an npm package
 * fails the build.
 */
import assert from "node:assert/strict";
import { build, Failure, HEAVY_VERBS } from "../scripts/build.ts";
import { ROOT, runCommand, type RunResult, waitUntil, withHost } from "./_harness.ts";

/** Runs `deno run -A <bundle>/main.js <args>` with `env`. */
function bundled(dir: string, args: string[], env: Record<string, string>): Promise<RunResult> {
  return runCommand(Deno.execPath(), ["run", "-A", "--quiet", `${dir}/main.js`, ...args], { env, cwd: dir });
}

Deno.test("build: the bundled CLI runs light and heavy verbs against a real host", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pf-build-" });
  try {
    await build(dir);
    // One file for main.js (with read and the client) and one per verb, heavy ones as re-exports.
    const heavy = await Deno.readTextFile(`${dir}/src/verbs/serve.js`);
    assert.match(heavy, /export \{ default \} from ".*src\/verbs\/serve\.ts";/);
    await withHost({}, async (host) => {
      const pf = (...args: string[]) => bundled(dir, args, host.env);
      const created = await pf("new", "--pane-name", "b", "-c", "echo bundled-$((6*7)); exec cat");
      assert.equal(created.code, 0, created.stderr);
      await waitUntil("the pane's output through the bundled read", async () => {
        const r = await pf("read", "b", "--raw");
        return r.code === 0 && r.stdout.includes("bundled-42");
      });
      const ls = JSON.parse((await pf("ls")).stdout);
      assert.deepEqual(ls.surfaces.map((s: { name: string }) => s.name), ["b"]);
      const sent = await pf("send", "b", "typed-in\r");
      assert.equal(sent.code, 0, sent.stderr);
      const waited = await pf("wait", "--match", "b", "--pattern", "typed-in", "--timeout", "10");
      assert.equal(waited.code, 0, waited.stderr);
      // `api` is a heavy verb: loaded from the source tree through its re-export.
      const ping = await pf("api", "system.ping");
      assert.equal(ping.code, 0, ping.stderr);
      assert.equal(JSON.parse(ping.stdout).pong, true);
      // Errors thrown by the bundle's copies of the error classes keep their exit codes.
      const missing = await pf("read", "nope");
      assert.equal(missing.code, 3);
      assert.equal(missing.stderr, 'paneflow: No pane matches "nope"\n');
      const badFile = await pf("up", `${dir}/missing.toml`);
      assert.equal(badFile.code, 2, badFile.stderr);
      const unknown = await pf("frobnicate");
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /unknown verb "frobnicate"/);
      const help = await pf("help", "read");
      assert.match(help.stdout, /^Usage: paneflow read <target>/);
      // `help` loads the verb it explains from its own file (with its own copy of the registry).
      const helpLs = await pf("help", "ls");
      assert.equal(helpLs.code, 0, helpLs.stderr);
      assert.match(helpLs.stdout, /^Usage: paneflow ls /);
      const version = await pf("version");
      const fromSource = await host.cli(["version"]);
      assert.equal(version.stdout, fromSource.stdout);
    });
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("build: a bundled verb that imports an npm package fails the build, naming it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pf-build-" });
  try {
    // `api` imports zod: bundled, it would load zod on every start of `api`.
    await assert.rejects(
      build(dir, HEAVY_VERBS.filter((v) => v !== "api")),
      (e: unknown) => e instanceof Failure && /^src\/verbs\/api\.js holds \S*zod/.test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("build: the task's usage errors exit 2", async () => {
  const out = await runCommand(Deno.execPath(), ["run", "-A", `${ROOT}scripts/build.ts`, "--frobnicate"]);
  assert.equal(out.code, 2);
  assert.match(out.stderr, /^build: .*frobnicate/);
});

Deno.test("build: --install puts a paneflow command that runs the bundle", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pf-build-" });
  try {
    const bin = Deno.execPath().slice(0, Deno.execPath().lastIndexOf("/"));
    const env = {
      PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
      DENO_INSTALL_ROOT: `${dir}/root`,
    };
    const out = await runCommand(
      Deno.execPath(),
      ["run", "-A", `${ROOT}scripts/build.ts`, "--out", `${dir}/cli`, "--install"],
      { env },
    );
    assert.equal(out.code, 0, out.stderr);
    const shim = await Deno.readTextFile(`${dir}/root/bin/paneflow`);
    assert.match(shim, new RegExp(`${dir}/cli/main\\.js`));
    const version = await runCommand(`${dir}/root/bin/paneflow`, ["version"], { env });
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^paneflow \d+\.\d+\.\d+/);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
