/**
 * `paneflow up`: panes in order with layout, focus, names and env; agents
 * through the launcher table; prompts typed and never submitted; ports that
 * skip bound ones; re-runs that reuse running panes; --dry-run; and managed
 * git worktrees in real repositories (creation, copy_env, setup success /
 * failure / timeout, teardown auto and keep, prune after the host is killed).
 */
import assert from "node:assert/strict";
import type { UpPane, UpResult } from "../src/up/apply.ts";
import {
  exists,
  readPane,
  ROOT,
  runCli,
  type Served,
  spawnServe,
  type TestHost,
  waitUntil,
  withHost,
} from "./_harness.ts";

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  if (!out.success) throw new Error(`git ${args.join(" ")}: ${dec.decode(out.stderr)}`);
  return dec.decode(out.stdout);
}

/** A repository with one commit, gitignored `.env` files and an untracked, not ignored, one. */
async function makeRepo(dir: string): Promise<string> {
  const repo = `${dir}/repo`;
  await Deno.mkdir(`${repo}/pkg`, { recursive: true });
  await git(repo, "init", "-q", "-b", "main");
  await Deno.writeTextFile(`${repo}/.gitignore`, ".env\n.env.local\n");
  await Deno.writeTextFile(`${repo}/.env.example`, "EXAMPLE=1\n");
  await Deno.writeTextFile(`${repo}/pkg/README`, "pkg\n");
  await git(repo, "add", ".");
  await git(repo, "commit", "-q", "-m", "init");
  await Deno.writeTextFile(`${repo}/.env`, "SECRET=1\n");
  await Deno.writeTextFile(`${repo}/.env.local`, "LOCAL=1\n");
  await Deno.writeTextFile(`${repo}/.env.untracked`, "NOT_IGNORED=1\n");
  return Deno.realPathSync(repo);
}

async function up(host: TestHost, file: string): Promise<UpResult> {
  const r = await host.cli(["up", file, "--json"]);
  if (r.code !== 0) throw new Error(`up exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function spec(host: TestHost, name: string, text: string): Promise<string> {
  const file = `${host.dir}/${name}`;
  await Deno.writeTextFile(file, text);
  return file;
}

async function screenHas(host: TestHost, target: string, text: string): Promise<string | false> {
  const screen = await readPane(host, target);
  return screen.includes(text) ? screen : false;
}

Deno.test("up: panes in order with layout, focus, names, env over terminal.env; agents via the launcher table; prompt typed, not submitted", async () => {
  const config = JSON.stringify({
    terminal: { env: { FROM_CONFIG: "config", SHARED: "config" } },
    agents: { claude: { command: "sh -c 'read -r line; echo got:$line'" } },
  });
  await withHost({ config }, async (host) => {
    const file = await spec(
      host,
      "team.toml",
      `
name = "team"
layout = "main_vertical"

[[panes]]
name = "lead"
agent = "claude"
prompt = "review the diff"

[[panes]]
name = "env"
command = "echo env=$FROM_CONFIG/$SHARED/$OWN; exec sleep 600"
env = { SHARED = "pane", OWN = "own" }
focus = true

[[panes]]
command = "exec sleep 600"
`,
    );
    const r = await up(host, file);
    assert.equal(r.title, "team");
    assert.deepEqual(r.panes.map((p) => p.name), ["lead", "env", null]);
    assert.deepEqual(r.surface_ids, r.panes.map((p) => p.surface_id));
    assert.deepEqual(r.created, r.surface_ids);
    assert.equal(r.panes[0].command, "sh -c 'read -r line; echo got:$line'");
    assert.equal(r.panes[0].prompt, "pending");
    assert.equal(r.panes[0].cwd, Deno.realPathSync(host.dir));

    const { workspaces } = await host.call("workspace.list");
    assert.equal(workspaces.length, 1);
    assert.equal(workspaces[0].layout, "main_vertical");
    assert.equal(workspaces[0].focused_surface_id, r.panes[1].surface_id);
    assert.equal(workspaces[0].active, true);

    await waitUntil("env merged over terminal.env", () => screenHas(host, "env", "env=config/pane/own"));
    // The prompt is on the program's input line, not submitted: read has not returned.
    await waitUntil("the prompt typed into the agent", () => screenHas(host, "lead", "review the diff"));
    assert.ok(!(await readPane(host, "lead")).includes("got:"));
    // Pressing Enter now proves it was the pending input line.
    const sent = await host.cli(["send", "lead", " now", "--submit"]);
    assert.equal(sent.code, 0, sent.stderr);
    await waitUntil("the typed line submitted", () => screenHas(host, "lead", "got:review the diff now"));
  });
});

Deno.test("up: ${port_offset} from port_base in strides of 10, skipping a bound port", async () => {
  let base = 0;
  for (let tries = 0; tries < 50 && !base; tries++) {
    const b = 20_000 + Math.floor(Math.random() * 3000) * 10;
    const free = [b, b + 10, b + 20].every((p) => {
      try {
        Deno.listen({ hostname: "127.0.0.1", port: p }).close();
        return true;
      } catch {
        return false;
      }
    });
    if (free) base = b;
  }
  assert.ok(base, "found a free port range");
  const bound = Deno.listen({ hostname: "127.0.0.1", port: base });
  try {
    await withHost({}, async (host) => {
      const file = await spec(
        host,
        "ports.toml",
        `
port_base = ${base}
[[panes]]
name = "web"
command = "echo web=$PORT; exec sleep 600"
env = { PORT = "\${port_offset}" }
[[panes]]
name = "api"
command = "echo api=$PORT url=$URL; exec sleep 600"
env = { PORT = "\${port_offset}", URL = "http://127.0.0.1:\${port_offset}/" }
[[panes]]
name = "plain"
command = "exec sleep 600"
`,
      );
      const dry = await host.cli(["up", file, "--dry-run", "--json"]);
      assert.equal(dry.code, 0, dry.stderr);
      assert.deepEqual(JSON.parse(dry.stdout).panes.map((p: UpPane) => p.port), [base + 10, base + 20, null]);

      const r = await up(host, file);
      assert.deepEqual(r.panes.map((p) => p.port), [base + 10, base + 20, null]);
      await waitUntil("web's port", () => screenHas(host, "web", `web=${base + 10}`));
      await waitUntil(
        "api's port",
        () => screenHas(host, "api", `api=${base + 20} url=http://127.0.0.1:${base + 20}/`),
      );
    });
  } finally {
    bound.close();
  }
});

Deno.test("up: re-running reuses running panes by name (and unnamed ones by place) instead of duplicating", async () => {
  await withHost({}, async (host) => {
    const file = await spec(
      host,
      "re.toml",
      `
name = "again"
[[panes]]
name = "one"
command = "exec sleep 600"
[[panes]]
command = "exec sleep 600"
[[panes]]
name = "three"
command = "exec sleep 600"
`,
    );
    // Over the socket, a bad spec is invalid params with every problem at its key path.
    const bad = await host.rpc("workspace.up", {
      panes: [{ cwd: "relative" }, { cwd: "/", agent: "nobody" }],
    });
    const error = bad.error as { code: number; message: string; data: { issues: unknown[] } };
    assert.equal(error.code, -32602);
    assert.deepEqual(error.data.issues, [
      { path: ["panes", 0, "cwd"], message: `"relative" must be an absolute path` },
      {
        path: ["panes", 1, "agent"],
        message:
          `unknown agent "nobody"; known launchers: claude, codex, opencode, gemini, qwen, copilot (add others as agents.<name>.command in the config)`,
      },
    ]);
    assert.equal((await host.call("workspace.list")).workspaces.length, 0);

    const first = await up(host, file);
    assert.equal(first.created.length, 3);

    const again = await host.cli(["up", file]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /0 panes created, 3 reused \(still running; matched by name\)/);
    const ls = await host.call("surface.list");
    assert.equal(ls.surfaces.length, 3);

    // A closed pane comes back; the others are reused.
    assert.equal((await host.cli(["close", "three"])).code, 0);
    const third = await up(host, file);
    assert.deepEqual(third.reused, first.created.slice(0, 2));
    assert.equal(third.created.length, 1);
    assert.ok(!first.created.includes(third.created[0]));
    assert.deepEqual(third.panes.map((p) => p.reused), [true, true, false]);
    assert.equal((await host.call("workspace.list")).workspaces.length, 1);

    // A pane of that name that no up of this workspace started is not taken over:
    // the spec is refused at the name's line, and nothing is created.
    const mine = await host.cli(["new", "--pane-name", "mine", "-c", "exec sleep 600"]);
    assert.equal(mine.code, 0, mine.stderr);
    const other = await spec(
      host,
      "other.toml",
      `name = "other"\n[[panes]]\nname = "mine"\ncommand = "exec sleep 1"\n`,
    );
    const clash = await host.cli(["up", other]);
    assert.equal(clash.code, 2);
    assert.match(
      clash.stderr,
      /other\.toml:3:\d+.*"mine" is already pane \d+ of workspace 1 .*which no earlier up of "other" started/,
    );
    assert.equal((await host.call("surface.list")).surfaces.length, 4);
  });
});

Deno.test("up --dry-run validates and prints the plan without a host; bad specs exit 2 with located errors", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pfu-" });
  try {
    const repo = await makeRepo(dir);
    const env = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: dir,
      PANEFLOW_SOCKET_PATH: `${dir}/s.sock`,
      PANEFLOW_CONFIG: `${dir}/config.jsonc`,
    };
    await Deno.writeTextFile(env.PANEFLOW_CONFIG, `{ "agents": { "claude": { "command": "sh" } } }`);
    const file = `${dir}/plan.toml`;
    await Deno.writeTextFile(
      file,
      `
name = "plan"
port_base = 3000
[[panes]]
name = "lead"
cwd = "repo"
agent = "claude"
prompt = "hello"
[[panes]]
name = "worker"
cwd = "~/repo/pkg"
worktree = "feat-y"
setup = "make"
[[panes]]
cwd = "repo"
command = "npm run dev"
env = { PORT = "\${port_offset}" }
`,
    );
    const human = await runCli(["up", file, "--dry-run"], env);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /nothing was created/);
    assert.match(human.stdout, /runs +sh {2}\(agent claude\)/);
    assert.match(human.stdout, /new branch "feat-y" from HEAD \([0-9a-f]+\); removed on close when clean/);
    assert.ok(human.stdout.includes(`cwd       ${repo}.worktrees/feat-y/pkg`));
    assert.match(human.stdout, /copy_env +\.env, \.env\.local/);
    assert.match(human.stdout, /env +PORT=\d+/);

    const json = await runCli(["up", file, "--dry-run", "--json"], env);
    assert.equal(json.code, 0, json.stderr);
    const plan = JSON.parse(json.stdout);
    assert.equal(plan.dry_run, true);
    assert.equal(plan.panes[1].worktree.action, "create_branch");
    assert.equal(plan.panes[1].worktree.path, `${repo}.worktrees/feat-y`);
    assert.equal(typeof plan.panes[2].port, "number");

    // Nothing touched: no host was started, no worktree or branch made.
    assert.ok(!(await exists(env.PANEFLOW_SOCKET_PATH)));
    assert.ok(!(await exists(`${repo}.worktrees`)));
    assert.equal((await git(repo, "branch", "--list", "feat-y")).trim(), "");

    // A branch checked out elsewhere is a located error, exit 2.
    await Deno.writeTextFile(file, `[[panes]]\ncwd = "repo"\nworktree = "main"\n`);
    const taken = await runCli(["up", file, "--dry-run"], env);
    assert.equal(taken.code, 2);
    assert.equal(taken.stdout, "");
    assert.equal(
      taken.stderr,
      `paneflow: ${file}:3:1: panes[0].worktree: branch "main" is already checked out at "${repo}"; ` +
        `git allows one worktree per branch: pick another branch or switch that checkout\n` +
        `paneflow: 1 problem in ${file}; nothing was created\n`,
    );
    // A pane name the host would refuse is refused here, before anything is created.
    await Deno.writeTextFile(
      file,
      `[[panes]]\nname = "a\\u001bb"\ncommand = "true"\n[[panes]]\nname = "  "\n`,
    );
    const badNames = await runCli(["up", file], env);
    assert.equal(badNames.code, 2);
    assert.match(
      badNames.stderr,
      /:2:\d+: panes\[0\]\.name: a pane name cannot contain control characters\n/,
    );
    assert.match(badNames.stderr, /:5:\d+: panes\[1\]\.name: a pane name cannot be empty\n/);
    assert.ok(!(await exists(env.PANEFLOW_SOCKET_PATH)), "no host was started for it");
    const missing = await runCli(["up", `${dir}/nope.toml`], env);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /Cannot read workspace file ".*nope.toml": no such file/);

    // Without a host: --no-autostart fails; plain up starts a detached one.
    await Deno.writeTextFile(file, `name = "auto"\n[[panes]]\nname = "p"\ncommand = "exec sleep 600"\n`);
    const refused = await runCli(["up", file, "--no-autostart"], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Instance unreachable/);
    const started = await runCli(["up", file], env);
    try {
      assert.equal(started.code, 0, started.stderr);
      assert.match(started.stdout, /Workspace "auto" is up \(index 0\): 1 pane created/);
    } finally {
      // system.shutdown is gated (docs/security.md): this host has no scripting, so a signal stops it.
      const id = await runCli(["api", "system.identify"], env);
      if (id.code === 0) Deno.kill(JSON.parse(id.stdout).pid, "SIGTERM");
      await waitUntil("the detached host to go", async () => !(await exists(env.PANEFLOW_SOCKET_PATH)));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("up: worktrees from HEAD or an existing branch, copy_env, setup success / failure / timeout in the pane", async () => {
  await withHost({}, async (host) => {
    const repo = await makeRepo(host.dir);
    await git(repo, "branch", "existing");
    const file = await spec(
      host,
      "wt.toml",
      `
name = "wt"
[[panes]]
name = "new"
cwd = "repo/pkg"
worktree = "feat/new"
setup = "echo setting-up; ls -a .. > ../setup-saw.txt"
command = "echo program-started in $(pwd); exec sleep 600"

[[panes]]
name = "old"
cwd = "repo"
worktree = "existing"
copy_env = false
setup = "echo about-to-fail; exit 3"
command = "echo program-started; exec sleep 600"

[[panes]]
name = "slow"
cwd = "repo"
setup = "echo sleeping; exec sleep 30"
setup_timeout_secs = 1
command = "echo program-started; exec sleep 600"
`,
    );
    const r = await up(host, file);
    const wtNew = `${repo}.worktrees/feat/new`;
    const wtOld = `${repo}.worktrees/existing`;
    assert.deepEqual(r.panes.map((p) => p.worktree), [wtNew, wtOld, null]);
    assert.equal(r.panes[0].cwd, `${wtNew}/pkg`);

    const list = await git(repo, "worktree", "list", "--porcelain");
    assert.ok(list.includes(`worktree ${wtNew}\n`) && list.includes("branch refs/heads/feat/new"));
    assert.ok(list.includes(`worktree ${wtOld}\n`) && list.includes("branch refs/heads/existing"));
    // copy_env: the gitignored .env files only; tracked ones come with the checkout.
    assert.equal(await Deno.readTextFile(`${wtNew}/.env`), "SECRET=1\n");
    assert.equal(await Deno.readTextFile(`${wtNew}/.env.local`), "LOCAL=1\n");
    assert.ok(!(await exists(`${wtNew}/.env.untracked`)));
    assert.ok(await exists(`${wtNew}/.env.example`));
    assert.ok(!(await exists(`${wtOld}/.env`)), "copy_env = false copies nothing");

    // Setup ran in the worktree, visibly, before the program.
    const screen = await waitUntil("setup then program", () => screenHas(host, "new", "program-started"));
    assert.ok(screen.indexOf("[paneflow] setup: echo setting-up") < screen.indexOf("setting-up\n"));
    assert.ok(screen.indexOf("[paneflow] setup done") < screen.indexOf("program-started"));
    // (A narrow pane wraps the long path.)
    assert.ok(screen.replaceAll("\n", "").includes(`program-started in ${wtNew}/pkg`), screen);
    assert.match(await Deno.readTextFile(`${wtNew}/setup-saw.txt`), /\.env\.local/);

    const failed = await waitUntil(
      "failed setup warns, then the program",
      () => screenHas(host, "old", "program-started"),
    );
    assert.ok(failed.includes("about-to-fail"));
    assert.ok(failed.includes("[paneflow] warning: setup failed (exit 3); starting anyway"));

    const slow = await waitUntil(
      "timed-out setup warns, then the program",
      () => screenHas(host, "slow", "program-started"),
    );
    assert.ok(slow.includes("[paneflow] warning: setup timed out after 1s; starting anyway"));
  });
});

Deno.test("up: teardown on close: auto removes a clean worktree (keeps its branch), keeps a dirty one; keep keeps", async () => {
  await withHost({}, async (host) => {
    const repo = await makeRepo(host.dir);
    const file = await spec(
      host,
      "td.toml",
      `
name = "td"
[[panes]]
name = "clean"
cwd = "repo"
worktree = "clean"
command = "exec sleep 600"
[[panes]]
name = "dirty"
cwd = "repo"
worktree = "dirty"
worktree_teardown = "auto"
command = "exec sleep 600"
[[panes]]
name = "kept"
cwd = "repo"
worktree = "kept"
worktree_teardown = "keep"
command = "exec sleep 600"
`,
    );
    const r = await up(host, file);
    const state = `${host.dir}/worktrees.json`;
    assert.equal(JSON.parse(await Deno.readTextFile(state)).worktrees.length, 3);
    await Deno.writeTextFile(`${repo}.worktrees/dirty/notes.txt`, "work in progress\n");

    const closed = await host.cli(["close", "--workspace", String(r.index)]);
    assert.equal(closed.code, 0, closed.stderr);
    assert.ok(!(await exists(`${repo}.worktrees/clean`)), "clean auto worktree removed");
    assert.equal((await git(repo, "branch", "--list", "clean")).trim(), "clean", "its branch stays");
    assert.ok(await exists(`${repo}.worktrees/dirty/notes.txt`), "dirty auto worktree kept");
    assert.ok(await exists(`${repo}.worktrees/kept`), "keep worktree kept");
    assert.ok(!(await exists(state)), "nothing left to manage");
    assert.match(host.log(), /worktree .*\/clean removed \(branch "clean" kept\)/);
    assert.match(host.log(), /worktree .*\/dirty kept: 1 changed or untracked file/);
  });
});

/** A host we can SIGKILL: `paneflow serve` with our own environment, once it answers. */
async function serve(env: Record<string, string>): Promise<Served> {
  const served = spawnServe(env);
  await waitUntil("the host to answer", async () => (await runCli(["api", "system.ping"], env)).code === 0, {
    timeoutMs: 20_000,
  });
  return served;
}

Deno.test("up: worktrees left by a host killed with SIGKILL are pruned at the next start", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pfk-" });
  try {
    const repo = await makeRepo(dir);
    const env = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: dir,
      SHELL: "/bin/sh",
      PANEFLOW_SOCKET_PATH: `${dir}/s.sock`,
      PANEFLOW_CONFIG: `${dir}/config.jsonc`,
    };
    await Deno.writeTextFile(env.PANEFLOW_CONFIG, "{}");
    const file = `${dir}/k.toml`;
    await Deno.writeTextFile(
      file,
      `[[panes]]\ncwd = "repo"\nworktree = "orphan"\ncommand = "exec sleep 600"\n` +
        `[[panes]]\ncwd = "repo"\nworktree = "orphan-dirty"\ncommand = "exec sleep 600"\n` +
        `[[panes]]\ncwd = "repo"\nworktree = "orphan-keep"\nworktree_teardown = "keep"\ncommand = "exec sleep 600"\n`,
    );
    const first = await serve(env);
    const r = await runCli(["up", file, "--no-autostart"], env);
    assert.equal(r.code, 0, r.stderr);
    await Deno.writeTextFile(`${repo}.worktrees/orphan-dirty/wip.txt`, "wip\n");
    first.child.kill("SIGKILL");
    await first.exited;
    assert.ok(await exists(`${repo}.worktrees/orphan`), "a killed host cannot clean up");

    const second = await serve(env);
    try {
      assert.ok(!(await exists(`${repo}.worktrees/orphan`)), "the clean orphan is removed at start");
      assert.equal((await git(repo, "branch", "--list", "orphan")).trim(), "orphan");
      assert.ok(await exists(`${repo}.worktrees/orphan-dirty/wip.txt`), "a dirty orphan is kept");
      assert.ok(await exists(`${repo}.worktrees/orphan-keep`), "keep is kept");
      assert.ok(!(await git(repo, "worktree", "list")).includes(`${repo}.worktrees/orphan `));
      assert.ok(!(await exists(`${dir}/worktrees.json`)));
      assert.match(second.log(), /orphaned worktree .*\/orphan removed/);
    } finally {
      second.child.kill("SIGTERM");
      await second.exited;
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("examples: dev.workspace.toml and team.workspace.toml dry-run (default launchers found on PATH)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pfe-" });
  try {
    await Deno.mkdir(`${dir}/dev`, { recursive: true });
    await makeRepo(`${dir}/dev`);
    await Deno.rename(`${dir}/dev/repo`, `${dir}/dev/api`);
    await Deno.mkdir(`${dir}/bin`);
    for (const agent of ["claude", "codex", "gemini"]) {
      await Deno.writeTextFile(`${dir}/bin/${agent}`, "#!/bin/sh\nexec cat\n", { mode: 0o755 });
    }
    const env = {
      PATH: `${dir}/bin:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
      HOME: dir,
      PANEFLOW_SOCKET_PATH: `${dir}/s.sock`,
      PANEFLOW_CONFIG: `${dir}/none.jsonc`,
    };
    const dev = await runCli(["up", `${ROOT}examples/dev.workspace.toml`, "--dry-run", "--json"], env);
    assert.equal(dev.code, 0, dev.stderr);
    assert.deepEqual(JSON.parse(dev.stdout).panes.map((p: UpPane) => p.name), ["shell", "server", "watch"]);

    const team = await runCli(["up", `${ROOT}examples/team.workspace.toml`, "--dry-run", "--json"], env);
    assert.equal(team.code, 0, team.stderr);
    const plan = JSON.parse(team.stdout);
    assert.deepEqual(plan.panes.map((p: { command: string }) => p.command), [
      "claude",
      "codex",
      "gemini",
      "npm run dev",
    ]);
    assert.equal(plan.panes[1].worktree.path, `${Deno.realPathSync(dir)}/dev/api.worktrees/feat-x-worker`);
    assert.ok(!(await exists(env.PANEFLOW_SOCKET_PATH)));

    // Without the agents installed, the plan names what is missing and how to fix it.
    const PATH = "/usr/local/bin:/usr/bin:/bin";
    const installed = await Promise.all(PATH.split(":").map((d) => exists(`${d}/claude`)));
    if (!installed.includes(true)) {
      const bare = await runCli(["up", `${ROOT}examples/team.workspace.toml`, "--dry-run"], { ...env, PATH });
      assert.equal(bare.code, 2);
      assert.ok(
        bare.stderr.includes(
          `team.workspace.toml:19:1: panes[0].agent: agent "claude" runs "claude", but "claude" is not on PATH; ` +
            `install it or set agents.claude.command in the config\n`,
        ),
        bare.stderr,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("surface.split with managed_worktree: the new pane runs in <repo>.worktrees/<branch>, torn down on close when clean", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pf-split-wt-" });
  try {
    const repo = await makeRepo(dir);
    await withHost({}, async (host) => {
      const first = await host.json<{ surface_id: number }>(["new", "--cwd", repo, "-c", "exec sleep 300"]);
      const pane = await host.call("surface.split", {
        direction: "h",
        surface_id: first.surface_id,
        cwd: `${repo}/pkg`,
        managed_worktree: "feat-split",
        name: "wt",
        command: "pwd; git branch --show-current; ls -a ..; exec sleep 300",
      });
      const wt = `${repo}.worktrees/feat-split`;
      assert.equal(pane.name, "wt");
      const text = await waitUntil("the pane's pwd and branch", async () => {
        const r = await host.cli(["read", "wt", "--raw"]);
        return r.stdout.includes("feat-split") && r.stdout;
      });
      assert.ok(text.includes(`${wt}/pkg`), text);
      assert.ok(text.includes(".env.local"), "copy_env copied the gitignored .env files");
      const ls = await host.json<{ surfaces: { surface_id: number; cols: number }[] }>(["ls"]);
      assert.equal(ls.surfaces.length, 2, "split next to the first pane");

      const bad = await host.rpc("surface.split", { direction: "v", cwd: dir, managed_worktree: "x" });
      assert.equal((bad.error as { code: number }).code, -32602, "a cwd outside a git repository is refused");

      const closed = await host.cli(["close", "wt"]);
      assert.equal(closed.code, 0, closed.stderr);
      await waitUntil("the clean worktree removed", async () => !(await exists(wt)));
      assert.match(await git(repo, "branch", "--list", "feat-split"), /feat-split/, "the branch is kept");
    });
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("up: a pane with setup is listed with its own command, not paneflow's setup wrapper", async () => {
  await withHost({}, async (host) => {
    const file = await spec(
      host,
      "setup.toml",
      `name = "shown"\n[[panes]]\nname = "job"\nsetup = "true"\ncommand = "echo SHOWN-$((6*7))"\n`,
    );
    await up(host, file);
    await waitUntil("the job to run and exit", async () => {
      const { surfaces } = await host.call("surface.list");
      return surfaces[0]?.exited && (await screenHas(host, "job", "SHOWN-42"));
    });
    const { surfaces } = await host.call("surface.list");
    assert.match(surfaces[0].cmd, / -c echo SHOWN-\$\(\(6\*7\)\)$/);
    const human = await host.cli(["ls", "--human"]);
    assert.doesNotMatch(human.stdout, /paneflow-setup-wrapper/);
    assert.equal(human.stdout.trimEnd().split("\n").length, 2, human.stdout);
  });
});
