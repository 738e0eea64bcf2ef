/**
 * Surfaces (panes): ids from 1 never reused, unique names, titles from OSC,
 * cwd and full argv of the foreground process, the pane environment, status,
 * and exited panes that stay readable with their exit code until closed.
 */
import assert from "node:assert/strict";
import { readPane, ROOT, type TestHost, waitUntil, withHost } from "./_harness.ts";
import type { Result } from "../src/spec/results.ts";

/** A pane as `surface.list` (and `ls --json`) gives it. */
type Pane = Result<"surface.list">["surfaces"][number];

async function list(host: TestHost): Promise<Pane[]> {
  return (await host.json<{ surfaces: Pane[] }>(["ls", "--all"])).surfaces;
}

/** One pane as `surface.list` gives it (over the socket: this runs in polling loops). */
async function pane(host: TestHost, id: number): Promise<Pane | undefined> {
  return (await host.call("surface.list")).surfaces.find((p) => p.surface_id === id);
}

/** A pane's raw text over the socket, for polling. */
async function text(host: TestHost, id: number): Promise<string> {
  return (await host.call("surface.read", { surface_id: id, fenced: false })).text;
}

Deno.test("surfaces: ids start at 1 and are never reused after close", async () => {
  await withHost({}, async (host) => {
    const ids: number[] = [];
    ids.push((await host.json<{ surface_id: number }>(["new", "-c", "sleep 300"])).surface_id);
    ids.push((await host.json<Pane>(["split", "h", "-c", "sleep 300"])).surface_id);
    assert.deepEqual(ids, [1, 2]);
    assert.equal((await host.cli(["close", "2"])).code, 0);
    ids.push((await host.json<Pane>(["split", "h", "-c", "sleep 300"])).surface_id);
    assert.equal(ids[2], 3, "2 is not reused");
    // Close everything: the workspace goes, but the counter does not restart.
    assert.equal((await host.cli(["close", "1"])).code, 0);
    assert.equal((await host.cli(["close", "3"])).code, 0);
    assert.deepEqual(await list(host), []);
    assert.deepEqual(await host.json(["ls"]), { surfaces: [] }, "no workspace left: an empty list, exit 0");
    ids.push((await host.json<{ surface_id: number }>(["new", "-c", "sleep 300"])).surface_id);
    assert.equal(ids[3], 4);
    // A closed id is not found (exit 3), and closing it again is not found either.
    const r = await host.cli(["close", "2"]);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /2/);
  });
});

Deno.test("surfaces: names are unique on the host; rename and --clear", async () => {
  await withHost({}, async (host) => {
    await host.json(["new", "--pane-name", "web", "-c", "sleep 300"]);
    await host.json(["new", "--pane-name", "db", "-c", "sleep 300"]);

    // A clash is an error whichever verb makes it, and nothing is created.
    for (
      const args of [
        ["new", "--pane-name", "web", "-c", "sleep 300"],
        ["split", "h", "--name", "web", "-c", "sleep 300"],
        ["rename", "db", "web"],
      ]
    ) {
      const r = await host.cli(args);
      assert.notEqual(r.code, 0, args.join(" "));
      assert.equal(r.stdout, "");
      assert.match(r.stderr, /"web" is already used by pane 1/, args.join(" "));
      assert.equal(r.stderr.trim().split("\n").length, 1);
    }
    assert.deepEqual((await list(host)).map((p) => [p.surface_id, p.name]), [[1, "web"], [2, "db"]]);
    const rpc = await host.rpc("surface.rename", { surface_id: 2, name: "web" });
    assert.equal((rpc.error as { code: number }).code, -32602);

    // Empty names and names with control characters are refused (a name must be selectable).
    for (const name of ["", " ", "a\nb", "tab\there"]) {
      const r = await host.cli(["rename", "db", name]);
      assert.equal(r.code, 2, JSON.stringify(name));
      assert.match(r.stderr, /"name"/);
      assert.equal(r.stderr.trim().split("\n").length, 1);
    }
    const emptyNew = await host.cli(["new", "--pane-name", "", "-c", "true"]);
    assert.equal(emptyNew.code, 2);

    // Names that would read as selectors are refused.
    for (const name of ["42", "cmdline:x", "cwd:/tmp"]) {
      const r = await host.cli(["rename", "db", name]);
      assert.notEqual(r.code, 0, name);
      assert.match(r.stderr, /selector/);
    }

    // Renaming frees the old name; --clear removes it.
    const renamed = await host.json<Pane>(["rename", "db", "database"]);
    assert.equal(renamed.name, "database");
    await host.json(["split", "h", "--name", "db", "-c", "sleep 300"]);
    const cleared = await host.json<Pane>(["rename", "database", "--clear"]);
    assert.equal(cleared.name, null);
    assert.equal((await host.cli(["read", "database"])).code, 3);
    // Renaming a pane to its own name is fine.
    assert.equal((await host.cli(["rename", "web", "web"])).code, 0);
  });
});

Deno.test("surfaces: title from OSC 0 and OSC 2", async () => {
  await withHost({}, async (host) => {
    await host.json([
      "new",
      "--pane-name",
      "t2",
      "-c",
      "printf '\\033]2;my window title\\007'; sleep 300",
    ]);
    await host.json([
      "split",
      "h",
      "--name",
      "t0",
      "-c",
      "printf '\\033]0;icon and title\\033\\\\'; echo set; read x; printf '\\033]2;changed\\007'; sleep 300",
    ]);
    await waitUntil("the OSC 2 title", async () => (await pane(host, 1))?.title === "my window title");
    await waitUntil("the OSC 0 title", async () => (await pane(host, 2))?.title === "icon and title");
    assert.equal((await host.cli(["send", "t0", "go", "--submit"])).code, 0);
    await waitUntil("the title to change", async () => (await pane(host, 2))?.title === "changed");
    // The title escape itself never shows up as text.
    assert.doesNotMatch(await readPane(host, "t2"), /my window title|\]2;/);
  });
});

Deno.test("surfaces: cwd and full argv come from the foreground process", async () => {
  await withHost({}, async (host) => {
    const base = await Deno.makeTempDir({ prefix: "pfc-" });
    try {
      const start = await Deno.realPath(base);
      await Deno.mkdir(`${start}/sub dir`);
      // An interactive shell: job control puts `sleep` in the foreground process group.
      const ws = await host.json<{ surface_id: number }>([
        "new",
        "--pane-name",
        "shell",
        "--cwd",
        start,
        "--env",
        "PS1=pfsh> ",
      ]);
      const id = ws.surface_id;
      let p = await pane(host, id);
      assert.equal(p?.cwd, start);
      assert.equal(p?.argv[0], "/bin/sh");
      await waitUntil("the shell prompt", async () => (await text(host, id)).includes("pfsh>"));

      assert.equal(
        (await host.cli(["send", "shell", "cd 'sub dir' && sleep 1000 2000", "--submit"])).code,
        0,
      );
      p = await waitUntil("sleep to be the foreground process", async () => {
        const x = await pane(host, id);
        return x?.argv[0] === "sleep" && x;
      });
      assert.deepEqual(p.argv, ["sleep", "1000", "2000"]);
      assert.equal(p.cmd, "sleep 1000 2000");
      assert.equal(p.cwd, `${start}/sub dir`);

      // Selectors see the same.
      assert.equal((await host.cli(["read", "cmdline:sleep 1000 2000", "--raw"])).code, 0);
      assert.equal((await host.cli(["read", `cwd:${start}/sub dir`, "--raw"])).code, 0);

      // ctrl-c ends sleep: the shell is the foreground again, still in the new directory.
      assert.equal((await host.cli(["key", "shell", "ctrl-c"])).code, 0);
      p = await waitUntil("the shell to be the foreground again", async () => {
        const x = await pane(host, id);
        return x?.argv[0] === "/bin/sh" && x;
      });
      assert.equal(p.cwd, `${start}/sub dir`);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  });
});

Deno.test("surfaces: every pane gets PANEFLOW_SOCKET_PATH, PANEFLOW_SURFACE_ID, TERM, terminal.env and its own env", async () => {
  const config = '{"terminal": {"env": {"FROM_CONFIG": "cfg", "OVERRIDE_ME": "cfg"}}}';
  await withHost({ config }, async (host) => {
    const show =
      'echo "sock=$PANEFLOW_SOCKET_PATH id=$PANEFLOW_SURFACE_ID term=$TERM cfg=$FROM_CONFIG over=$OVERRIDE_ME own=$OWN"; sleep 300';
    await host.json(["new", "--pane-name", "e1", "-c", show]);
    await host.json([
      "split",
      "h",
      "--name",
      "e2",
      "--env",
      "OVERRIDE_ME=pane",
      "--env",
      "OWN=x=y",
      "-c",
      show,
    ]);
    // A pane cannot spoof its own id or socket through its env.
    await host.json([
      "split",
      "v",
      "--name",
      "e3",
      "--env",
      "PANEFLOW_SURFACE_ID=99",
      "--env",
      "PANEFLOW_SOCKET_PATH=/nowhere",
      "-c",
      show,
    ]);
    const want = {
      e1: `sock=${host.socket} id=1 term=xterm-256color cfg=cfg over=cfg own=`,
      e2: `sock=${host.socket} id=2 term=xterm-256color cfg=cfg over=pane own=x=y`,
      e3: `sock=${host.socket} id=3 term=xterm-256color cfg=cfg over=cfg own=`,
    };
    for (const [i, [name, line]] of Object.entries(want).entries()) {
      await waitUntil(`pane ${name}'s environment`, async () => (await text(host, i + 1)) === line);
      assert.equal((await readPane(host, name)).trim(), line);
    }
    // A program in a pane drives its own host through that environment, with no flags.
    const self = `'${Deno.execPath()}' run -A --quiet --config='${ROOT}deno.json' '${ROOT}main.ts'`;
    await host.json([
      "split",
      "h",
      "--name",
      "nested",
      "-c",
      `${self} status "$PANEFLOW_SURFACE_ID"; exec sleep 300`,
    ]);
    await waitUntil(
      "the nested CLI to report its own pane",
      async () => (await text(host, 4)).startsWith("4 (nested) "),
    );
    assert.match(await text(host, 4), /^4 \(nested\) idle/);

    const bad = await host.cli(["split", "h", "--env", "NOEQUALS", "-c", "true"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /KEY=VALUE/);
  });
});

Deno.test("surfaces: an exited pane stays listed and readable with its exit code until closed", async () => {
  await withHost({}, async (host) => {
    await host.json(["new", "--pane-name", "done", "-c", "echo last words; exit 7"]);
    await host.json(["split", "h", "--name", "ok", "-c", "echo fine"]);
    await host.json(["split", "h", "--name", "killed", "-c", "echo dying; kill -9 $$"]);
    await waitUntil("the panes to exit", async () => {
      const l = (await host.call("surface.list")).surfaces;
      return l.every((x) => x.exited);
    });
    const p = await list(host);
    assert.deepEqual(p.map((x) => [x.name, x.exited, x.exit_code]), [
      ["done", true, 7],
      ["ok", true, 0],
      ["killed", true, 137],
    ], "a pane killed by a signal does not report success");
    assert.equal((p[2] as unknown as { exit_signal: number }).exit_signal, 9);
    assert.equal((await readPane(host, "killed")).trim(), "dying");
    assert.equal((await readPane(host, "done")).trim(), "last words");
    const status = await host.call("surface.status", { surface_id: 1 });
    assert.equal(status.surface_id, 1);
    assert.equal(status.state, "idle");
    assert.equal(typeof status.output_generation, "number");

    // It can be read and searched, not written.
    const search = await host.json<{ count: number }>(["search", "done", "LAST"]);
    assert.equal(search.count, 1);
    const send = await host.cli(["send", "done", "hello"]);
    assert.equal(send.code, 1);
    assert.match(send.stderr, /exited/);
    assert.equal(send.stderr.trim().split("\n").length, 1);
    const key = await host.cli(["key", "done", "tab"]);
    assert.equal(key.code, 1);
    assert.match(key.stderr, /exited/);
    // A key name that is wrong anyway is the usage error it would be on a live pane.
    const badKey = await host.cli(["key", "done", "hyper-q"]);
    assert.equal(badKey.code, 2);
    assert.match(badKey.stderr, /Unknown key "hyper-q"/);

    const human = await host.cli(["ls", "--human"]);
    assert.match(human.stdout, /exited 7/);

    // Closing it removes it.
    assert.equal((await host.cli(["close", "done"])).code, 0);
    assert.equal((await host.cli(["read", "done"])).code, 3);
    assert.deepEqual((await list(host)).map((x) => x.name), ["ok", "killed"]);
  });
});

Deno.test("surfaces: a program that closes its terminal before it exits is not hung up; its own exit code is reported", async () => {
  await withHost({}, async (host) => {
    // Closing the PTY master hangs the terminal up and the kernel sends SIGHUP:
    // the host must keep it open until the program has exited. Here the window
    // between closing the terminal and exiting is wide; `cat` reading EOF has
    // the same window, a few microseconds wide.
    const { surface_id: id } = await host.json<{ surface_id: number }>([
      "new",
      "-c",
      "exec 0<&- 1>&- 2>&-; sleep 0.3; exit 7",
    ]);
    const { surface_id: cat } = await host.json<{ surface_id: number }>(["split", "h", "-c", "exec cat"]);
    await host.call("surface.send_text", { surface_id: cat, text: "\x04" });
    const exited = await waitUntil("both panes to exit", async () => {
      const [a, b] = [await pane(host, id), await pane(host, cat)];
      return a?.exited && b?.exited ? [a.exit_code, b.exit_code] : false;
    });
    assert.deepEqual(exited, [7, 0]);
  });
});

Deno.test("surfaces: status of a live pane without an agent is idle with its output generation", async () => {
  await withHost({}, async (host) => {
    await host.json(["new", "--pane-name", "cat", "-c", "cat"]);
    const before = await host.json<Record<string, unknown>>(["status", "cat", "--json"]);
    assert.equal(before.surface_id, 1);
    assert.equal(before.state, "idle");
    assert.equal(typeof before.output_generation, "number");
    assert.equal((await host.cli(["send", "cat", "ping", "--submit"])).code, 0);
    await waitUntil("output_generation to advance", async () => {
      const now = await host.json<{ output_generation: number }>(["status", "cat", "--json"]);
      return now.output_generation > (before.output_generation as number);
    });
    const human = await host.cli(["status", "cat"]);
    assert.equal(human.code, 0);
    assert.match(human.stdout, /^1 \(cat\) idle/);
    const missing = await host.cli(["status", "nope"]);
    assert.equal(missing.code, 3);
  });
});

Deno.test("surfaces: a relative --cwd is the caller's, not the host's", async () => {
  await withHost({}, async (host) => {
    const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "pfr-" }));
    try {
      await Deno.mkdir(`${base}/proj/sub`, { recursive: true });
      // The CLI runs in `base`; the host runs in the test's directory.
      const cli = async (args: string[]) => {
        const out = await new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", "--quiet", `--config=${ROOT}deno.json`, `${ROOT}main.ts`, ...args],
          cwd: base,
          env: host.env,
          clearEnv: true,
          stdout: "piped",
          stderr: "piped",
        }).output();
        const dec = new TextDecoder();
        return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
      };
      let r = await cli(["new", "--cwd", "proj", "-c", "pwd; exec sleep 300"]);
      assert.equal(r.code, 0, r.stderr);
      r = await cli(["split", "h", "--cwd", "proj/sub", "-c", "pwd; exec sleep 300"]);
      assert.equal(r.code, 0, r.stderr);
      r = await cli(["split", "h", "-c", "pwd; exec sleep 300"]);
      assert.equal(r.code, 0, r.stderr);
      await waitUntil("the panes' pwd", async () => (await text(host, 3)) === base);
      assert.equal(await text(host, 1), `${base}/proj`);
      assert.equal(await text(host, 2), `${base}/proj/sub`);
      const p = await list(host);
      assert.deepEqual(p.map((x) => x.cwd), [`${base}/proj`, `${base}/proj/sub`, base]);
      r = await cli(["new", "--cwd", "missing", "-c", "true"]);
      assert.equal(r.code, 2);
      assert.ok(r.stderr.includes(`${base}/missing`), r.stderr);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  });
});
