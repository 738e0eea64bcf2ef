/**
 * `paneflow serve`: claiming the socket, modes, stale sockets, config
 * errors, `--detach`, autostart, and clean shutdown on SIGTERM/SIGINT/SIGHUP.
 */
import assert from "node:assert/strict";
import { exists, rawExchange, runCli, type Served, spawnServe, waitUntil, withHost } from "./_harness.ts";

/** The environment a host or CLI gets in these tests. */
function baseEnv(socket: string, config: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? "/tmp",
    SHELL: "/bin/sh",
    PANEFLOW_SOCKET_PATH: socket,
    PANEFLOW_CONFIG: config,
    PANEFLOW_IPC_SCRIPTING: "1",
    ...extra,
  };
}

/** A `paneflow serve` child we control (signals, exit status, stderr). */
async function ping(socket: string): Promise<boolean> {
  try {
    const lines = await rawExchange(
      socket,
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "system.ping", params: {} }) + "\n",
      { timeoutMs: 2000 },
    );
    return lines.length > 0 && JSON.parse(lines[0]).result?.pong === true;
  } catch {
    return false;
  }
}

/** Runs `fn` with a fresh temp dir that is removed afterwards. */
async function withTempDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "pfh-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Stops a served host with SIGTERM if it is still running and waits for it. */
async function stopServed(s: Served) {
  try {
    s.child.kill("SIGTERM");
  } catch { /* already gone */ }
  await s.exited;
}

Deno.test("serve: a second host on a live socket is refused and the first keeps serving", async () => {
  await withHost({}, async (host) => {
    const r = await runCli(["serve"], host.env);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /already running/);
    assert.ok(r.stderr.includes(host.socket), r.stderr);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    assert.ok(await ping(host.socket), "the first host still answers");
    assert.ok(await exists(host.socket), "the socket file was left alone");
  });
});

Deno.test("serve: makes the socket directory 0700 and the socket 0600, and fixes a lax paneflow dir", async () => {
  await withTempDir(async (dir) => {
    // A directory that does not exist yet: the host creates it 0700.
    const socket = `${dir}/run/paneflow/p.sock`;
    const config = `${dir}/config.jsonc`;
    await Deno.writeTextFile(config, "{}");
    const s = spawnServe(baseEnv(socket, config));
    try {
      await waitUntil("the host to answer", () => ping(socket));
      assert.equal((await Deno.stat(`${dir}/run/paneflow`)).mode! & 0o777, 0o700);
      const info = await Deno.lstat(socket);
      assert.ok(info.isSocket, "the path is a socket");
      assert.equal(info.mode! & 0o777, 0o600);
    } finally {
      await stopServed(s);
    }

    // Existing "paneflow" and "paneflow-$UID" directories with a lax mode are tightened to 0700.
    for (const lax of [`${dir}/lax/paneflow`, `${dir}/lax/paneflow-0`]) {
      await Deno.mkdir(lax, { recursive: true });
      await Deno.chmod(lax, 0o777);
      const s2 = spawnServe(baseEnv(`${lax}/p.sock`, config));
      try {
        await waitUntil("the host to answer", () => ping(`${lax}/p.sock`));
        assert.equal((await Deno.stat(lax)).mode! & 0o777, 0o700);
      } finally {
        await stopServed(s2);
      }
    }

    // Someone else's directory, or one other users may write to, is refused: they could swap the socket.
    const shared = `${dir}/shared`;
    await Deno.mkdir(shared, { mode: 0o777 });
    await Deno.chmod(shared, 0o777);
    const r = await runCli(["serve"], baseEnv(`${shared}/p.sock`, config));
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `paneflow: ${shared} is writable by other users (mode 777); refusing to put the socket there (chmod 700 it)\n`,
    );
    if (Deno.uid() === 0) {
      const foreign = `${dir}/foreign`;
      await Deno.mkdir(foreign, { mode: 0o700 });
      await Deno.chown(foreign, 65534, 65534);
      const f = await runCli(["serve"], baseEnv(`${foreign}/p.sock`, config));
      assert.equal(f.code, 1);
      assert.match(f.stderr, /foreign belongs to uid 65534, not to you/);
    }
  });
});

Deno.test("serve: takes over a stale socket left by a killed host", async () => {
  await withTempDir(async (dir) => {
    const socket = `${dir}/s.sock`;
    const config = `${dir}/config.jsonc`;
    await Deno.writeTextFile(config, "{}");
    const env = baseEnv(socket, config);
    const first = spawnServe(env);
    await waitUntil("the first host to answer", () => ping(socket));
    first.child.kill("SIGKILL");
    await first.exited;
    assert.ok(await exists(socket), "SIGKILL leaves the socket file behind");
    assert.equal(await ping(socket), false, "nobody listens on the stale socket");

    const second = spawnServe(env);
    try {
      await waitUntil("the second host to answer on the stale path", () => ping(socket));
      assert.match(second.log(), /listening on/);
    } finally {
      await stopServed(second);
    }
  });
});

Deno.test("serve: takes over a socket file nobody listens on", async () => {
  await withTempDir(async (dir) => {
    const socket = `${dir}/s.sock`;
    const config = `${dir}/config.jsonc`;
    await Deno.writeTextFile(config, "{}");
    // Bind a socket and exit without unlinking it: a leftover with no listener.
    const py = await new Deno.Command("python3", {
      args: ["-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])", socket],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(py.code, 0, new TextDecoder().decode(py.stderr));
    assert.ok((await Deno.lstat(socket)).isSocket);
    const s = spawnServe(baseEnv(socket, config));
    try {
      await waitUntil("the host to answer", () => ping(socket));
    } finally {
      await stopServed(s);
    }
  });
});

Deno.test("serve: SIGTERM gives every pane SIGHUP, removes the socket and exits 0", async () => {
  await withTempDir(async (dir) => {
    const socket = `${dir}/s.sock`;
    const config = `${dir}/config.jsonc`;
    await Deno.writeTextFile(config, "{}");
    const env = baseEnv(socket, config);
    const s = spawnServe(env);
    try {
      await waitUntil("the host to answer", () => ping(socket));
      // `wait` is interruptible by a trapped signal; a foreground `sleep` is not.
      const hupA = `${dir}/hup-a`;
      const hupB = `${dir}/hup-b`;
      const trap = (file: string) =>
        `trap 'echo got-hup > ${file}; exit 0' HUP; echo armed; sleep 100 & wait`;
      for (const [name, file] of [["a", hupA], ["b", hupB]]) {
        const r = await runCli(["new", "--pane-name", name, "-c", trap(file)], env);
        assert.equal(r.code, 0, r.stderr);
      }
      for (const id of [1, 2]) {
        await waitUntil(`pane ${id} to arm its trap`, async () => {
          const lines = await rawExchange(
            socket,
            JSON.stringify({ jsonrpc: "2.0", id: 1, method: "surface.read", params: { surface_id: id } }) +
              "\n",
          );
          return JSON.parse(lines[0]).result.text.includes("armed");
        });
      }
      s.child.kill("SIGTERM");
      const code = await s.exited;
      assert.equal(code, 0, s.log());
      assert.match(s.log(), /shutting down/);
      assert.equal(await exists(socket), false, "the socket file is removed");
      for (const file of [hupA, hupB]) {
        const text = await waitUntil(`${file} to be written by the HUP trap`, async () => {
          try {
            return await Deno.readTextFile(file);
          } catch {
            return false;
          }
        }, { timeoutMs: 5000 });
        assert.equal(text.trim(), "got-hup");
      }
    } finally {
      await stopServed(s);
    }
  });
});

Deno.test("serve: SIGINT and SIGHUP (a closed terminal) also shut down cleanly", async () => {
  for (const signal of ["SIGINT", "SIGHUP"] as const) {
    await withTempDir(async (dir) => {
      const socket = `${dir}/s.sock`;
      const config = `${dir}/config.jsonc`;
      await Deno.writeTextFile(config, "{}");
      const s = spawnServe(baseEnv(socket, config));
      try {
        await waitUntil("the host to answer", () => ping(socket));
        s.child.kill(signal);
        assert.equal(await s.exited, 0, `${signal}: ${s.log()}`);
        assert.equal(await exists(socket), false, signal);
      } finally {
        await stopServed(s);
      }
    });
  }
});

Deno.test("serve: a host that stops removes its socket only while the file is still its own", async () => {
  await withTempDir(async (dir) => {
    const socket = `${dir}/s.sock`;
    const config = `${dir}/config.jsonc`;
    await Deno.writeTextFile(config, "{}");
    const a = spawnServe(baseEnv(socket, config));
    let b: Served | undefined;
    try {
      await waitUntil("host A to answer", () => ping(socket));
      // Someone removes A's socket and a second host takes the path.
      await Deno.remove(socket);
      b = spawnServe(baseEnv(socket, config));
      await waitUntil("host B to answer", () => ping(socket));
      a.child.kill("SIGTERM");
      assert.equal(await a.exited, 0, a.log());
      assert.ok(await ping(socket), "host B is still reachable after A stopped");
    } finally {
      await stopServed(a);
      if (b) await stopServed(b);
    }
  });
});

Deno.test("serve --detach: a relative socket path is made absolute; a silent foreign listener fails it quickly", async () => {
  await withTempDir(async (dir) => {
    const config = `${dir}/config.jsonc`;
    await Deno.writeTextFile(config, "{}");
    const env = baseEnv("rel.sock", config);
    const r = await runCli(["serve", "--detach"], env, undefined, { cwd: dir });
    try {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${dir}/rel.sock\n`);
      const id = await runCli(["api", "system.identify"], {
        ...env,
        PANEFLOW_SOCKET_PATH: `${dir}/rel.sock`,
      });
      assert.equal(JSON.parse(id.stdout).socket, `${dir}/rel.sock`);
    } finally {
      await runCli(["api", "system.shutdown"], { ...env, PANEFLOW_SOCKET_PATH: `${dir}/rel.sock` });
    }

    // Something listens on the path and never answers: --detach gives up with why, not hangs.
    const silent = `${dir}/silent.sock`;
    const listener = Deno.listen({ transport: "unix", path: silent });
    const held: Deno.Conn[] = [];
    const accepting = (async () => {
      for await (const c of listener) held.push(c);
    })();
    try {
      const started = Date.now();
      const d = await runCli(["serve", "--detach"], baseEnv(silent, config));
      assert.equal(d.code, 1);
      assert.match(
        d.stderr,
        /^paneflow: Could not start a host on .*silent\.sock: Another program is listening/,
      );
      assert.ok(Date.now() - started < 12_000, `gave up after ${Date.now() - started} ms`);
    } finally {
      for (const c of held) c.close();
      listener.close();
      await accepting.catch(() => {});
    }
  });
});

/** A listener on `path` that closes each connection unanswered: `once` (then exits, leaving its socket file) or `always`. */
async function dropper(path: string, mode: "once" | "always"): Promise<Deno.ChildProcess> {
  const child = new Deno.Command("python3", {
    args: [
      "-c",
      `import socket, os, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen()
while True:
    c, _ = s.accept(); c.close()
    if sys.argv[2] == "once": os._exit(0)`,
      path,
      mode,
    ],
  }).spawn();
  await waitUntil("the listener's socket", () => exists(path));
  return child;
}

Deno.test("serve: a listener that drops the probe and goes away (a host killed moments ago) is stale; one that keeps dropping is another program", async () => {
  await withTempDir(async (dir) => {
    const config = `${dir}/config.jsonc`;
    await Deno.writeTextFile(config, "{}");
    // A host SIGKILLed on a loaded machine: its listener still accepted the next serve's probe,
    // then went away with it unanswered. The next serve failed with "Another program is listening".
    const killed = `${dir}/killed.sock`;
    const once = await dropper(killed, "once");
    const next = spawnServe(baseEnv(killed, config));
    try {
      await once.status; // it took the next serve's probe
      await waitUntil(
        "the next host to answer",
        async () => (await runCli(["api", "system.ping"], baseEnv(killed, config))).code === 0,
        { timeoutMs: 15_000 },
      ).catch((e) => {
        throw new Error(`${e.message}; its log: ${next.log()}`);
      });
    } finally {
      await runCli(["api", "system.shutdown"], baseEnv(killed, config));
      await next.exited;
    }

    const rude = `${dir}/rude.sock`;
    const always = await dropper(rude, "always");
    try {
      const d = await runCli(["serve"], baseEnv(rude, config));
      assert.equal(d.code, 1);
      assert.match(d.stderr, /Another program is listening/);
    } finally {
      always.kill("SIGKILL");
      await always.status;
    }
  });
});

Deno.test("serve --detach returns once the socket answers and prints its path", async () => {
  await withTempDir(async (dir) => {
    const socket = `${dir}/d/s.sock`;
    const config = `${dir}/config.jsonc`;
    await Deno.writeTextFile(config, "{}");
    const env = baseEnv(socket, config);
    const r = await runCli(["serve", "--detach"], env);
    let pid: number | undefined;
    try {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), socket);
      assert.equal(r.stderr, "");
      // No polling: it must answer the moment --detach has returned.
      assert.ok(await ping(socket), "the detached host answers right away");
      const id = await rawExchange(
        socket,
        JSON.stringify({ jsonrpc: "2.0", id: 1, method: "system.identify" }) + "\n",
      );
      const identity = JSON.parse(id[0]).result;
      assert.equal(identity.name, "paneflow");
      assert.equal(typeof identity.version, "string");
      assert.equal(typeof identity.protocol, "number");
      pid = identity.pid;
      assert.notEqual(pid, undefined);
      // A second --detach finds the live host and is refused; it must not start another.
      const again = await runCli(["serve", "--detach"], env);
      assert.equal(again.code, 1);
      assert.equal(again.stderr, `paneflow: A paneflow host is already running on ${socket}\n`);
      assert.ok(await ping(socket));
      const id2 = JSON.parse(
        (await rawExchange(
          socket,
          JSON.stringify({ jsonrpc: "2.0", id: 1, method: "system.identify" }) + "\n",
        ))[0],
      ).result;
      assert.equal(id2.pid, pid, `still the same host (second --detach: ${again.code} ${again.stderr})`);
    } finally {
      if (pid) {
        Deno.kill(pid, "SIGTERM");
        await waitUntil("the detached host to remove its socket", async () => !(await exists(socket)));
      }
    }
  });
});

Deno.test("new starts a detached host when none answers; --no-autostart and read verbs do not", async () => {
  await withTempDir(async (dir) => {
    const socket = `${dir}/auto/s.sock`;
    const config = `${dir}/config.jsonc`;
    await Deno.writeTextFile(config, "{}");
    const env = baseEnv(socket, config);

    const ls = await runCli(["ls"], env);
    assert.equal(ls.code, 1);
    assert.match(ls.stderr, /paneflow serve --detach/);
    const noAuto = await runCli(["new", "--no-autostart", "-c", "true"], env);
    assert.equal(noAuto.code, 1);
    assert.match(noAuto.stderr, /paneflow serve --detach/);
    assert.equal(await exists(socket), false, "neither started a host");

    const r = await runCli(["new", "--pane-name", "auto", "-c", "echo autostarted; sleep 100"], env);
    let pid: number | undefined;
    try {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).surface_id, 1);
      const identity = JSON.parse(
        (await rawExchange(
          socket,
          JSON.stringify({ jsonrpc: "2.0", id: 1, method: "system.identify" }) + "\n",
        ))[0],
      ).result;
      pid = identity.pid;
      await waitUntil("the autostarted pane's output", async () => {
        const out = await runCli(["read", "auto", "--raw"], env);
        return out.stdout.includes("autostarted");
      });
    } finally {
      if (pid) {
        Deno.kill(pid, "SIGTERM");
        await waitUntil("the autostarted host to remove its socket", async () => !(await exists(socket)));
      }
    }
  });
});

Deno.test("config: an unknown key stops the host with a message naming the key and the file", async () => {
  await withTempDir(async (dir) => {
    const socket = `${dir}/s.sock`;
    const cases: [string, RegExp][] = [
      [`{\n  // a comment\n  "ai_unrestricted": false,\n  "bogus_key": 1\n}`, /"bogus_key"/],
      [`{"terminal": {"colz": 80}}`, /"terminal\.colz"/],
      // A shell that is not there is found at start, not when every pane fails with it.
      [
        `{"terminal": {"shell": "/nonexistent/zsh"}}`,
        /"terminal\.shell".*\/nonexistent\/zsh is not an executable file/,
      ],
    ];
    for (const [text, key] of cases) {
      const config = `${dir}/config.jsonc`;
      await Deno.writeTextFile(config, text);
      const r = await runCli(["serve"], baseEnv(socket, config));
      assert.equal(r.code, 1, `exit code for ${text}`);
      assert.match(r.stderr, key);
      assert.ok(r.stderr.includes(config), `names the file: ${r.stderr}`);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
      assert.doesNotMatch(r.stderr, /Internal error/, "a config error is the user's, not an internal one");
      assert.equal(await exists(socket), false, "no socket was created");

      // serve --detach reports the same reason instead of a bare "could not start".
      const d = await runCli(["serve", "--detach"], baseEnv(socket, config));
      assert.equal(d.code, 1);
      assert.match(d.stderr, key);
      assert.ok(d.stderr.includes(config), `names the file: ${d.stderr}`);
      assert.equal(d.stderr.trim().split("\n").length, 1, d.stderr);
    }

    // A wrong type names the key too; a JSON syntax error names the file and position.
    const config = `${dir}/config.jsonc`;
    await Deno.writeTextFile(config, `{"submit_paste_delay_ms": "fast"}`);
    let r = await runCli(["serve"], baseEnv(socket, config));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /submit_paste_delay_ms/);
    assert.ok(r.stderr.includes(config));
    await Deno.writeTextFile(config, `{"ai_unrestricted": tru}`);
    r = await runCli(["serve"], baseEnv(socket, config));
    assert.equal(r.code, 1);
    assert.ok(r.stderr.includes(config), r.stderr);
  });
});

Deno.test("config: JSONC with comments and trailing commas is accepted and its settings apply", async () => {
  const config = `{
    // comments are allowed
    "ai_unrestricted": false,
    /* block comment */
    "terminal": { "cols": 120, "rows": 30, "env": { "FROM_CONFIG": "yes" }, },
  }`;
  await withHost({ config }, async (host) => {
    const ws = await host.json<{ cols: number; rows: number; surface_id: number }>([
      "new",
      "-c",
      "stty size; echo env=$FROM_CONFIG; sleep 100",
    ]);
    assert.equal(ws.cols, 120);
    assert.equal(ws.rows, 30);
    await waitUntil("stty size and the env from the config", async () => {
      const r = await host.cli(["read", String(ws.surface_id), "--raw"]);
      return r.stdout.includes("30 120") && r.stdout.includes("env=yes");
    });
  });
});

Deno.test("serve: never deletes what is not a stale socket: a regular file, a foreign listener; too-long paths", async () => {
  await withTempDir(async (dir) => {
    const config = `${dir}/config.jsonc`;
    await Deno.writeTextFile(config, "{}");

    // A regular file where the socket should be is left alone.
    const file = `${dir}/important.txt`;
    await Deno.writeTextFile(file, "precious");
    let r = await runCli(["serve"], baseEnv(file, config));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not a socket/);
    assert.ok(r.stderr.includes(file));
    assert.equal(r.stderr.trim().split("\n").length, 1);
    assert.equal(await Deno.readTextFile(file), "precious");

    // Another program listening on the path (it answers, but not as paneflow) keeps its socket.
    const foreign = `${dir}/foreign.sock`;
    const listener = Deno.listen({ transport: "unix", path: foreign });
    const held: Deno.Conn[] = [];
    const accepting = (async () => {
      for await (const c of listener) {
        held.push(c);
        await c.write(new TextEncoder().encode("HTTP/1.0 400 Bad Request\r\n\r\n")).catch(() => {});
      }
    })();
    try {
      r = await runCli(["serve"], baseEnv(foreign, config));
      assert.equal(r.code, 1);
      assert.match(r.stderr, /Another program is listening/);
      assert.ok((await Deno.lstat(foreign)).isSocket, "the foreign socket is still there");
    } finally {
      for (const c of held) c.close();
      listener.close();
      await accepting.catch(() => {});
    }

    // A path over the 107-byte limit of a unix socket is refused with a message.
    const long = `${dir}/${"x".repeat(120)}.sock`;
    r = await runCli(["serve"], baseEnv(long, config));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /too long/);
    assert.equal(r.stderr.trim().split("\n").length, 1);
  });
});
