/**
 * The CLI as a user meets it: `--help` on every verb, unknown verbs, no
 * host, selectors (id, name, cmdline:, cwd:; none or several is exit 3),
 * aliases, exit codes, and errors as one line on stderr without a stack.
 */
import assert from "node:assert/strict";
import { exists, runCli, type RunResult, waitUntil, withHost } from "./_harness.ts";

/** An environment pointing at a socket path where nothing listens (and nothing may be created). */
async function noHostEnv(): Promise<{ env: Record<string, string>; dir: string; socket: string }> {
  const dir = await Deno.makeTempDir({ prefix: "pfv-" });
  const socket = `${dir}/none/s.sock`;
  return {
    dir,
    socket,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: dir,
      PANEFLOW_SOCKET_PATH: socket,
      PANEFLOW_CONFIG: `${dir}/config.jsonc`,
    },
  };
}

/** One clear line on stderr, no stack trace. */
function oneLine(r: RunResult, what: string) {
  assert.equal(r.stderr.trim().split("\n").length, 1, `${what}: ${r.stderr}`);
  assert.doesNotMatch(r.stderr, /^\s+at /m, `${what}: stack trace`);
  assert.match(r.stderr, /^paneflow: /, what);
}

/** Verb names from the top-level usage. */
function verbsFromUsage(usage: string): string[] {
  const lines = usage.split("\n");
  const start = lines.findIndex((l) => l.trim() === "Verbs:");
  assert.ok(start >= 0, usage);
  const names: string[] = [];
  for (const l of lines.slice(start + 1)) {
    const m = /^ {2}(\S+)\s{2,}/.exec(l);
    if (!m) break;
    names.push(m[1]);
  }
  return names;
}

const REQUIRED_VERBS = [
  "serve",
  "ls",
  "read",
  "search",
  "status",
  "ps",
  "new",
  "select",
  "split",
  "focus",
  "send",
  "key",
  "rename",
  "close",
  "version",
  "help",
];

Deno.test("cli: every verb and alias has --help (exit 0) and none contacts or starts a host", async () => {
  const { env, dir, socket } = await noHostEnv();
  try {
    const top = await runCli(["--help"], env);
    assert.equal(top.code, 0);
    assert.match(top.stdout, /^Usage: paneflow/);
    assert.match(top.stdout, /Exit codes/);
    const verbs = verbsFromUsage(top.stdout);
    for (const v of REQUIRED_VERBS) assert.ok(verbs.includes(v), `usage lists ${v}`);

    const names = [...verbs, "list_panes", "read_pane", "search_pane"];
    const results = await Promise.all(names.map((v) => runCli([v, "--help"], env)));
    names.forEach((v, i) => {
      const r = results[i];
      assert.equal(r.code, 0, `${v} --help: ${r.stderr}`);
      assert.match(r.stdout, /^Usage: paneflow /, v);
      assert.match(r.stdout, /-h, --help/, v);
      assert.equal(r.stderr, "", v);
    });
    // Aliases show their verb's help.
    assert.equal(results[names.indexOf("list_panes")].stdout, results[names.indexOf("ls")].stdout);
    assert.equal(results[names.indexOf("read_pane")].stdout, results[names.indexOf("read")].stdout);
    assert.equal(results[names.indexOf("search_pane")].stdout, results[names.indexOf("search")].stdout);

    // `help <verb>` is the same text; -h works too.
    const viaHelp = await runCli(["help", "read"], env);
    assert.equal(viaHelp.code, 0);
    assert.equal(viaHelp.stdout, results[names.indexOf("read")].stdout);
    const short = await runCli(["ls", "-h"], env);
    assert.equal(short.stdout, results[names.indexOf("ls")].stdout);
    const badHelp = await runCli(["help", "frobnicate"], env);
    assert.equal(badHelp.code, 2);

    assert.equal(await exists(socket), false, "no host was started");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli: an unknown verb prints usage on stderr, exits 2 and contacts nothing", async () => {
  const { env, dir, socket } = await noHostEnv();
  await Deno.mkdir(`${dir}/none`);
  const listener = Deno.listen({ transport: "unix", path: socket });
  try {
    for (const verb of ["frobnicate", "LS", "list-panes", "--bogus"]) {
      const r = await runCli([verb, "1"], env);
      assert.equal(r.code, 2, verb);
      assert.equal(r.stdout, "", verb);
      assert.match(r.stderr, /unknown verb|Unknown/i, verb);
      assert.match(r.stderr, /Usage: paneflow/, verb);
    }
    // If the CLI had connected, its connection would be the first one accepted.
    const probe = await Deno.connect({ transport: "unix", path: socket });
    await probe.write(new TextEncoder().encode("probe\n"));
    const first = await listener.accept();
    const buf = new Uint8Array(16);
    const n = await first.read(buf);
    assert.equal(
      new TextDecoder().decode(buf.subarray(0, n ?? 0)),
      "probe\n",
      "the first connection is ours",
    );
    first.close();
    probe.close();

    const none = await runCli([], env);
    assert.equal(none.code, 2, "no verb at all is a usage error");
    assert.match(none.stdout + none.stderr, /Usage: paneflow/);
  } finally {
    listener.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli: with no host, verbs exit 1 saying how to start one, and do not start one", async () => {
  const { env, dir, socket } = await noHostEnv();
  try {
    const cases = [
      ["ls"],
      ["list_panes"],
      ["read", "1"],
      ["read", "alpha"],
      ["search", "1", "x"],
      ["status", "1"],
      ["ps"],
      ["focus", "1"],
      ["select", "0"],
      ["split", "h"],
      ["send", "1", "x"],
      ["key", "1", "tab"],
      ["rename", "1", "x"],
      ["close", "1"],
      ["layout", "tiled"],
      ["new", "--no-autostart"],
    ];
    const results = await Promise.all(cases.map((args) => runCli(args, env)));
    cases.forEach((args, i) => {
      const r = results[i];
      const what = args.join(" ");
      assert.equal(r.code, 1, `${what}: ${r.stderr}`);
      assert.equal(r.stdout, "", what);
      assert.match(r.stderr, /unreachable/i, what);
      assert.ok(r.stderr.includes(socket), `${what} names the socket`);
      assert.match(r.stderr, /paneflow serve --detach/, what);
      oneLine(r, what);
    });
    assert.equal(await exists(socket), false, "nothing started a host");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli: selectors by id, name, cmdline: and cwd: across workspaces; none or several is exit 3", async (t) => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "pfs-" }));
  const dirA = `${base}/a`;
  const dirB = `${base}/b`;
  await Deno.mkdir(dirA);
  await Deno.mkdir(dirB);
  try {
    await withHost({}, async (host) => {
      // Three workspaces; the last one created is active.
      await host.json([
        "new",
        "--pane-name",
        "alpha",
        "--cwd",
        dirA,
        "-c",
        "echo I am alpha; exec sleep 301",
      ]);
      await host.json(["new", "--pane-name", "beta", "--cwd", dirB, "-c", "echo I am beta; exec sleep 302"]);
      await host.json(["new", "--cwd", dirB, "-c", "echo I am three; exec sleep 303"]);
      await waitUntil("all panes to run sleep", async () => {
        const { surfaces } = await host.call("surface.list");
        return surfaces.every((s) => s.cmd.startsWith("sleep 30"));
      });

      const readAs = async (sel: string) => {
        const r = await host.cli(["read", sel, "--raw"]);
        return { ...r, who: r.stdout.trim() };
      };

      await t.step("each kind of selector finds its pane, in any workspace", async () => {
        for (
          const [sel, who] of [
            ["1", "I am alpha"],
            ["3", "I am three"],
            ["alpha", "I am alpha"],
            ["beta", "I am beta"],
            ["cmdline:sleep 302", "I am beta"],
            ["cmdline:303", "I am three"],
            [`cwd:${dirA}`, "I am alpha"],
            [`cwd:${dirA}/`, "I am alpha"],
            [`cwd:${dirB}/../a`, "I am alpha"],
          ]
        ) {
          const r = await readAs(sel);
          assert.equal(r.code, 0, `${sel}: ${r.stderr}`);
          assert.equal(r.who, who, sel);
        }
      });

      await t.step("no match is exit 3", async () => {
        for (
          const sel of ["nope", "99", "0", "99999999999999999999", "cmdline:vim", `cwd:${base}`, "Alpha"]
        ) {
          const r = await readAs(sel);
          assert.equal(r.code, 3, `${sel}: ${r.stderr}`);
          assert.equal(r.stdout, "");
          oneLine(r, sel);
          // Where to look is part of the message.
          assert.match(r.stderr, /; list them with: paneflow ls --all --human\n$/, sel);
        }
        const viaVerbs = await Promise.all([
          host.cli(["search", "nope", "x"]),
          host.cli(["focus", "nope"]),
          host.cli(["rename", "nope", "x"]),
          host.cli(["close", "nope"]),
          host.cli(["status", "nope"]),
          host.cli(["send", "nope", "x"]),
          host.cli(["key", "nope", "tab"]),
          host.cli(["split", "h", "--target", "nope"]),
        ]);
        for (const r of viaVerbs) {
          assert.equal(r.code, 3, r.stderr);
          oneLine(r, "verb with an unknown target");
        }
      });

      await t.step("several matches are exit 3 and name the candidates", async () => {
        const byCwd = await readAs(`cwd:${dirB}`);
        assert.equal(byCwd.code, 3);
        assert.match(byCwd.stderr, /matches 2 panes: 2 \(beta\), 3/);
        oneLine(byCwd, "cwd: ambiguous");
        const byCmd = await readAs("cmdline:sleep");
        assert.equal(byCmd.code, 3);
        assert.match(byCmd.stderr, /matches 3 panes/);
      });

      await t.step("malformed selectors are usage errors", async () => {
        for (const sel of ["cmdline:", "cwd:", ""]) {
          const r = await readAs(sel);
          assert.equal(r.code, 2, `"${sel}": ${r.stderr}`);
          oneLine(r, `"${sel}"`);
        }
      });

      await t.step("aliases list_panes, read_pane and search_pane match their verbs", async () => {
        const [ls, listPanes] = await Promise.all([
          host.cli(["ls", "--all"]),
          host.cli(["list_panes", "--all"]),
        ]);
        assert.equal(ls.code, 0);
        assert.deepEqual(JSON.parse(listPanes.stdout), JSON.parse(ls.stdout));
        const [read, readPane] = await Promise.all([
          host.cli(["read", "beta", "--raw"]),
          host.cli(["read_pane", "beta", "--raw"]),
        ]);
        assert.equal(readPane.code, 0);
        assert.equal(readPane.stdout, read.stdout);
        const [search, searchPane] = await Promise.all([
          host.cli(["search", "alpha", "ALPHA", "--raw"]),
          host.cli(["search_pane", "alpha", "ALPHA", "--raw"]),
        ]);
        assert.equal(searchPane.code, 0);
        assert.deepEqual(JSON.parse(searchPane.stdout), JSON.parse(search.stdout));
        assert.equal(JSON.parse(search.stdout).count, 1);
      });

      await t.step(
        "ls prints one JSON document; --human an aligned table; ls lists the active workspace",
        async () => {
          const all = await host.cli(["ls", "--all"]);
          const doc = JSON.parse(all.stdout) as { surfaces: { surface_id: number; workspace: number }[] };
          assert.deepEqual(doc.surfaces.map((s) => [s.surface_id, s.workspace]), [[1, 0], [2, 1], [3, 2]]);
          const active = await host.json<{ surfaces: { surface_id: number }[] }>(["ls"]);
          assert.deepEqual(active.surfaces.map((s) => s.surface_id), [3]);
          // --json is the default, accepted for scripts that pass it everywhere.
          assert.deepEqual(await host.json(["ls", "--json"]), active);
          assert.equal((await host.cli(["ls", "--json", "--human"])).code, 2);
          const ws1 = await host.json<{ surfaces: { surface_id: number }[] }>(["ls", "--workspace", "1"]);
          assert.deepEqual(ws1.surfaces.map((s) => s.surface_id), [2]);
          const noWs = await host.cli(["ls", "--workspace", "7"]);
          assert.equal(noWs.code, 3);
          assert.match(noWs.stderr, /0\.\.2/);
          oneLine(noWs, "ls --workspace 7");
          const human = await host.cli(["ls", "--all", "--human"]);
          assert.equal(human.code, 0);
          const rows = human.stdout.trimEnd().split("\n");
          assert.match(rows[0], /^ID\s+NAME\s+WS\s+SIZE\s+STATE\s+CWD\s+CMD$/);
          assert.equal(rows.length, 4);
          assert.match(rows[1], /^1\s+alpha\s+0\s+200x50\s+\S+\s+\S+\s+sleep 301$/);
          assert.match(rows[3], /^3\s+-\s+2\s/);
          // Columns line up: every row has CMD at the same offset.
          const at = rows[0].indexOf("CMD");
          assert.ok(rows.slice(1).every((r) => r.slice(at).startsWith("sleep 30")), human.stdout);
        },
      );

      await t.step("usage errors are exit 2 with one line", async () => {
        const cases = [
          ["read"],
          ["read", "1", "2"],
          ["read", "1", "--lines"],
          ["read", "1", "--lines", "x"],
          ["ls", "--bogus"],
          ["ls", "--human=yes"],
          ["select", "x"],
          ["split", "diagonal"],
          ["send", "1"],
          ["key", "1"],
          ["rename", "alpha"],
          ["close"],
          ["search", "1"],
        ];
        const results = await Promise.all(cases.map((c) => host.cli(c)));
        cases.forEach((c, i) => {
          assert.equal(results[i].code, 2, `${c.join(" ")}: ${results[i].stderr}`);
          assert.equal(results[i].stdout, "", c.join(" "));
          oneLine(results[i], c.join(" "));
        });
      });

      await t.step("version", async () => {
        const [v, flag, alone] = await Promise.all([
          host.cli(["version"]),
          host.cli(["--version"]),
          host.cli(["version"], { env: { PANEFLOW_SOCKET_PATH: `${base}/no-host.sock` } }),
        ]);
        assert.equal(v.code, 0);
        // The client's version, then the host's (system.identify).
        const pid = (await host.call("system.identify")).pid;
        const [client, hostLine] = v.stdout.split("\n");
        assert.match(client, /^paneflow \d+\.\d+\.\d+ \(protocol \d+\)$/);
        assert.equal(hostLine, `host: ${client}, pid ${pid}, ${host.socket}`);
        assert.equal(flag.stdout, v.stdout);
        // No host: the client's line alone, still exit 0.
        assert.equal(alone.code, 0, alone.stderr);
        assert.equal(alone.stdout, `${client}\n`);
      });
    });
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

/** What `deno info --json` says of a module graph. */
interface ModuleGraph {
  roots: string[];
  modules: { specifier: string; dependencies?: { code?: { specifier: string } }[] }[];
}

/**
 * The modules a graph loads at run time: reached from its roots through
 * imports that carry code (static or dynamic); `import type` edges are
 * erased and load nothing (the client types its results from src/spec/).
 */
function loadedModules(graph: ModuleGraph): Set<string> {
  const bySpecifier = new Map(graph.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const todo = [...graph.roots];
  while (todo.length) {
    const s = todo.pop()!;
    if (seen.has(s)) continue;
    seen.add(s);
    for (const d of bySpecifier.get(s)?.dependencies ?? []) if (d.code) todo.push(d.code.specifier);
  }
  return seen;
}

Deno.test("cli: the read path (main.ts, ls, read, send, wait, status, tmux) loads no npm package", async () => {
  const root = new URL("../", import.meta.url).pathname;
  for (
    const entry of [
      "main.ts",
      "src/verbs/ls.ts",
      "src/verbs/read.ts",
      "src/verbs/send.ts",
      "src/verbs/wait.ts",
      "src/verbs/status.ts",
      "src/verbs/tmux.ts",
      "src/tmux/mod.ts",
    ]
  ) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", `--config=${root}deno.json`, `${root}${entry}`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as ModuleGraph;
    const outside = [...loadedModules(info)].filter((s) =>
      !s.startsWith(`file://${root}src/`) && s !== `file://${root}main.ts`
    );
    assert.deepEqual(outside, [], `${entry} loads only our own modules`);
  }
});
