/**
 * The bundled CLI (`deno task build`): every kind of verb works through it
 * against a real host, errors keep their exit codes across the bundle's
 * copies of the error classes, and a light verb that imports an npm package
 * fails the build.
 */
import assert from "node:assert/strict";
import { build, Failure, HEAVY_VERBS } from "../scripts/build.ts";
import { HOST_V8_FLAGS } from "../src/paths.ts";
import { ROOT, runCommand, type RunResult, waitUntil, withHost } from "./_harness.ts";

/** A fresh directory for a bundle: inside the project, whose deno.json a bundle runs with. */
async function bundleDir(): Promise<string> {
  await Deno.mkdir(`${ROOT}dist`, { recursive: true });
  return await Deno.makeTempDir({ dir: `${ROOT}dist`, prefix: "test-cli-" });
}

/** Runs `deno task build <args>` (scripts/build.ts) with `env`. */
function buildTask(args: string[], env?: Record<string, string>): Promise<RunResult> {
  return runCommand(Deno.execPath(), ["run", "-A", `${ROOT}scripts/build.ts`, ...args], env && { env });
}

/** Runs `deno run -A <bundle>/main.js <args>` with `env`. */
function bundled(dir: string, args: string[], env: Record<string, string>): Promise<RunResult> {
  return runCommand(Deno.execPath(), ["run", "-A", "--quiet", `${dir}/main.js`, ...args], { env, cwd: dir });
}

Deno.test("build: the bundled CLI runs light and heavy verbs against a real host", async () => {
  const dir = await bundleDir();
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
      assert.equal(
        missing.stderr,
        'paneflow: No pane matches "nope"; list them with: paneflow ls --all --human\n',
      );
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
  const dir = await bundleDir();
  try {
    // `api` imports zod: bundled, it would load zod on every start of `api`.
    await assert.rejects(
      build(dir, HEAVY_VERBS.filter((v) => v !== "api")),
      (e: unknown) => e instanceof Failure && /^src\/verbs\/api\.js holds \S*zod/.test(e.message),
    );
    // What the failed build left is still ours: the next build empties it.
    await build(dir);
    assert.ok((await Deno.stat(`${dir}/main.js`)).isFile);
    const api = await Deno.readTextFile(`${dir}/src/verbs/api.js`);
    assert.match(api, /^\/\/ Loaded from source/);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("build: the task's usage errors exit 2", async () => {
  const out = await buildTask(["--frobnicate"]);
  assert.equal(out.code, 2);
  assert.match(out.stderr, /^build: .*frobnicate/);
});

Deno.test("build: --install puts paneflow commands that run the bundle, a detached host included", async () => {
  const dir = await bundleDir();
  const env = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: dir,
    PANEFLOW_INSTALL_DIR: `${dir}/bin`,
    // system.shutdown, at the end, is gated like keystrokes.
    PANEFLOW_IPC_SCRIPTING: "1",
    PANEFLOW_SOCKET_PATH: `${dir}/s.sock`,
    PANEFLOW_CONFIG: `${dir}/config.jsonc`,
  };
  await Deno.writeTextFile(env.PANEFLOW_CONFIG, "{}\n");
  const pf = (...args: string[]) => runCommand(`${dir}/bin/paneflow`, args, { env });
  let started = false;
  try {
    const built = await buildTask(["--out", `${dir}/cli`, "--install"], env);
    assert.equal(built.code, 0, built.stderr);
    assert.match(built.stderr, /Installed .*\/bin\/paneflow-ai-hook\n/);
    assert.match(built.stderr, /is not on your PATH/);
    assert.match(await Deno.readTextFile(`${dir}/bin/paneflow-mcp`), /main\.js mcp "\$@"$/m);
    // Light verbs compile main.js up front; the heavy ones start lazily, the host with its V8 flags.
    const script = await Deno.readTextFile(`${dir}/bin/paneflow`);
    assert.ok(
      script.split("\n").some((l) =>
        l.startsWith("  serve) exec ") && l.includes(` --v8-flags=${HOST_V8_FLAGS} `)
      ),
      script,
    );
    assert.match(script, /^ {2}[a-z|]*\bup\b[^)]*\) exec (?:(?!no-lazy).)* ;;$/m);
    assert.match(script, /^exec .* --v8-flags=--no-lazy .*main\.js "\$@"$/m);
    // What the compiled binary's smoke test does: a detached host, a pane, its output read back.
    const serve = await pf("serve", "--detach");
    assert.equal(serve.code, 0, serve.stderr);
    started = true;
    const created = await pf("new", "-c", "echo installed-$((6*7)); exec cat");
    assert.equal(created.code, 0, created.stderr);
    await waitUntil("the pane's output through the installed command", async () => {
      return (await pf("read", "1", "--raw")).stdout.includes("installed-42");
    });
  } finally {
    if (started) await pf("api", "system.shutdown");
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("build: refuses an --out outside the project or not its own", async () => {
  const outside = await buildTask(["--out", "/tmp"]);
  assert.equal(outside.code, 2);
  assert.match(outside.stderr, /^build: \/tmp is not inside the project/);
  const source = await buildTask(["--out", `${ROOT}src`]);
  assert.equal(source.code, 2);
  assert.match(source.stderr, /src is not empty and holds no earlier build; refusing to empty it/);
  assert.ok((await Deno.stat(`${ROOT}src/client/client.ts`)).isFile);
  const file = await buildTask(["--out", `${ROOT}deno.json`]);
  assert.equal(file.code, 2);
  assert.match(file.stderr, /^build: \S*deno\.json is a file, not a directory\n$/);
});
