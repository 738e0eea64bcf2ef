/**
 * `paneflow flow run` end to end with shell panes on a real host: every step
 * kind, variables, foreach fan-out and fan-in, truncation, failure modes and
 * exit codes, the report, --dry-run, the write gate, Ctrl-C, the embedded host
 * in a clean environment and --keep-host.
 */
import assert from "node:assert/strict";
import type { FlowReport, StepReport } from "../src/flow/runner.ts";
import type { Result, ResultMethod } from "../src/spec/results.ts";
import { paneflowCommand } from "./_claude.ts";
import { ROOT, runCli, type RunResult, type TestHost, waitUntil, withHost } from "./_harness.ts";

/** `flow run --json`: the runner's report plus the exit code and where the host ran. */
interface Report extends FlowReport {
  exit_code: number;
  host: string;
}

type PaneInfo = Result<"surface.list">["surfaces"][number];

const MAIN = [`--config=${ROOT}deno.json`, `${ROOT}main.ts`];

async function writeFlow(host: { dir: string }, name: string, text: string): Promise<string> {
  const path = `${host.dir}/${name}.flow.toml`;
  await Deno.writeTextFile(path, text);
  return path;
}

/** Runs a flow with --json against the host; returns the parsed report and the raw result. */
async function runJson(host: TestHost, path: string, extra: string[] = []) {
  const r = await host.cli(["flow", "run", path, "--json", ...extra]);
  let report: Report;
  try {
    report = JSON.parse(r.stdout);
  } catch {
    throw new Error(`flow run gave no JSON (exit ${r.code}):\n${r.stdout}\n--- stderr ---\n${r.stderr}`);
  }
  return { r, report };
}

function byStep(report: Report): Record<string, StepReport> {
  return Object.fromEntries(report.steps.map((s) => [s.step, s]));
}

async function panes(host: TestHost): Promise<PaneInfo[]> {
  return (await host.call("surface.list", {})).surfaces;
}

async function screen(host: TestHost, id: number, lines = 100): Promise<string> {
  return (await host.call("surface.read", { surface_id: id, lines, fenced: false })).text;
}

function explain(r: RunResult): string {
  return `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
}

Deno.test("flow run: every step kind, captures into a submitted prompt and sends, foreach fan-out and fan-in", async () => {
  await withHost({}, async (host) => {
    const path = await writeFlow(
      host,
      "kinds",
      `
name = "kinds"
layout = "tiled"

[defaults]
timeout_secs = 20

# A pane, a ready barrier and a one-line capture.
[[step]]
id = "build"
pane = { command = "sh -c 'echo compiling; echo ARTIFACT=abc123; exec cat'" }
ready = { pattern = "^ARTIFACT=" }
capture = { var = "artifact", lines = 1 }

# Fan-out: one pane per item, \${item} in name, env and pattern.
[[step]]
id = "check"
foreach = ["api", "web"]
pane = { command = "sh -c 'echo CHECKED:$PKG; exec sh'", name = "check-\${item}", env = { PKG = "\${item}" } }
ready = { pattern = "^CHECKED:\${item}$" }
capture = { var = "result", lines = 1 }

# A stand-in agent: reads one line (the submitted prompt) and answers.
[[step]]
id = "agent"
needs = ["build"]
submit = true
pane = { command = "sh -c 'read -r l; echo GOT:$l; exec cat'", prompt = "ship \${artifact}" }
ready = { pattern = "^GOT:" }
capture = { var = "got", lines = 1 }

# A send per item into that item's pane; the barrier sees only what follows the send.
[[step]]
id = "kick"
needs = ["check"]
foreach = ["api", "web"]
send = { target = "check[\${item}]", text = "echo KICKED-$PKG-\${result.\${item}}", submit = true }
ready = { pattern = "^KICKED-\${item}-" }
capture = { var = "kicked", lines = 1 }

[[step]]
id = "collector"
pane = { command = "cat" }

# Fan-in: waits for every instance of kick, reads each item's capture and the whole group.
[[step]]
id = "deliver"
needs = ["kick", "collector", "agent"]
send = { target = "collector", text = "FANIN api=\${kicked.api} web=\${kicked.web}\\nALL \${result}\\nGOT \${got}", submit = true }
`,
    );
    const { r, report } = await runJson(host, path);
    assert.equal(r.code, 0, explain(r));
    assert.equal(report.exit_code, 0);
    const steps = byStep(report);
    assert.deepEqual(
      report.steps.map((s) => `${s.step} ${s.status}`).sort(),
      ["agent", "build", "check[api]", "check[web]", "collector", "deliver", "kick[api]", "kick[web]"]
        .map((k) => `${k} READY`),
    );
    // The report's shape, for machines.
    assert.deepEqual(Object.keys(report).sort(), [
      "cancelled",
      "captures",
      "duration_ms",
      "exit_code",
      "flow",
      "host",
      "ok",
      "steps",
    ]);
    assert.deepEqual(Object.keys(steps.build).sort(), [
      "cancelled",
      "duration_ms",
      "error",
      "host",
      "id",
      "item",
      "started_ms",
      "status",
      "step",
      "submitted",
      "surface_id",
      "timeout",
    ]);
    assert.equal(steps.build.submitted, null);
    assert.equal(steps.build.host, "local");
    assert.equal(steps.agent.submitted, "sent");
    assert.equal(steps["kick[api]"].submitted, "sent");
    assert.equal(report.ok, true);
    assert.equal(report.host, host.socket);
    assert.deepEqual([steps["check[web]"].id, steps["check[web]"].item], ["check", "web"]);
    assert.deepEqual(report.captures, {
      artifact: "ARTIFACT=abc123",
      result: { api: "CHECKED:api", web: "CHECKED:web" },
      got: "GOT:ship ARTIFACT=abc123",
      kicked: { api: "KICKED-api-CHECKED:api", web: "KICKED-web-CHECKED:web" },
    });
    // A send step reports the pane it wrote to.
    assert.equal(steps["kick[api]"].surface_id, steps["check[api]"].surface_id);
    assert.equal(steps.deliver.surface_id, steps.collector.surface_id);

    // Pane names: given ones kept, the rest named after their step.
    const live = await panes(host);
    const names = Object.fromEntries(live.map((p) => [p.surface_id, p.name]));
    assert.equal(names[steps["check[api]"].surface_id!], "check-api");
    assert.equal(names[steps.build.surface_id!], "build");
    assert.equal(names[steps.agent.surface_id!], "agent");

    const collected = await waitUntil("the fan-in text in the collector", async () => {
      const text = await screen(host, steps.collector.surface_id!);
      return text.includes("GOT GOT:ship ARTIFACT=abc123") && text;
    });
    for (
      const line of [
        "FANIN api=KICKED-api-CHECKED:api web=KICKED-web-CHECKED:web",
        "ALL api: CHECKED:api",
        "web: CHECKED:web",
      ]
    ) assert.ok(collected.includes(line), `collector lacks ${JSON.stringify(line)}:\n${collected}`);
  });
});

Deno.test("flow run: independent steps run in parallel; a dependent starts when its needs are READY", async () => {
  await withHost({}, async (host) => {
    const path = await writeFlow(
      host,
      "parallel",
      `
[defaults]
timeout_secs = 20

[[step]]
id = "a"
pane = { command = "sh -c 'sleep 1; echo DONE-A; exec cat'" }
ready = { pattern = "^DONE-A" }

[[step]]
id = "b"
pane = { command = "sh -c 'sleep 1; echo DONE-B; exec cat'" }
ready = { pattern = "^DONE-B" }

[[step]]
id = "c"
needs = ["a", "b"]
pane = { command = "cat" }
`,
    );
    const { r, report } = await runJson(host, path);
    assert.equal(r.code, 0, explain(r));
    const s = byStep(report);
    // b does not wait for a: both start before either could have finished.
    assert.ok(Math.abs(s.a.started_ms! - s.b.started_ms!) < 900, JSON.stringify(report.steps));
    const aEnd = s.a.started_ms! + s.a.duration_ms!;
    const bEnd = s.b.started_ms! + s.b.duration_ms!;
    assert.ok(s.c.started_ms! >= Math.max(aEnd, bEnd), JSON.stringify(report.steps));
    assert.ok(s.c.started_ms! - Math.max(aEnd, bEnd) < 500, JSON.stringify(report.steps));
  });
});

Deno.test("flow run: substituted text over 64 KiB is cut and marked …[truncated]", async () => {
  // Wide panes, so that the 190-character lines are not wrapped into rows of a split screen.
  await withHost({ config: `{ "terminal": { "cols": 1000 } }` }, async (host) => {
    const out = `${host.dir}/received.txt`;
    const path = await writeFlow(
      host,
      "big",
      `
[defaults]
timeout_secs = 20

# 400 lines of 190 digits (about 76 KB), then a marker.
[[step]]
id = "big"
pane = { command = '''awk 'BEGIN { for (i = 0; i < 400; i++) printf "%0190d\\n", i; print "BIG-END"; system("cat") }' ''' }
ready = { pattern = "^BIG-END$" }
capture = { var = "big", lines = 401 }

[[step]]
id = "sink"
pane = { command = "sh -c 'cat > ${out}'" }

[[step]]
id = "send"
needs = ["big", "sink"]
send = { target = "sink", text = "\${big}", submit = true }
`,
    );
    const { r, report } = await runJson(host, path);
    assert.equal(r.code, 0, explain(r));
    // The capture itself is whole: 400 lines and the marker.
    const big = report.captures.big as string;
    assert.equal(big.split("\n").length, 401);
    assert.ok(new TextEncoder().encode(big).length > 64 * 1024);
    const got = await waitUntil("the truncated text in the file", async () => {
      const text = await Deno.readTextFile(out).catch(() => "");
      return text.endsWith("\n") && text.includes("[truncated]") && text;
    });
    // 64 KiB exactly, the marker included, then the Enter of submit.
    assert.equal(new TextEncoder().encode(got).length, 64 * 1024 + 1);
    assert.ok(got.endsWith("…[truncated]\n"), got.slice(-40));
    assert.ok(got.startsWith(`${"0".repeat(190)}\n${"0".repeat(189)}1\n`));
  });
});

Deno.test("flow run: fail_fast cancels running steps and skips the rest; exit 1", async () => {
  await withHost({}, async (host) => {
    const path = await writeFlow(
      host,
      "failfast",
      `
[defaults]
timeout_secs = 30
on_failure = "fail_fast"

# Exits before its ready pattern shows: the step fails.
[[step]]
id = "bad"
pane = { command = "sh -c 'echo starting; sleep 0.3; exit 3'" }
ready = { pattern = "^NEVER" }

# Still waiting when bad fails: cancelled.
[[step]]
id = "slow"
pane = { command = "sh -c 'exec cat'" }
ready = { pattern = "^NEVER-EITHER" }

[[step]]
id = "after_bad"
needs = ["bad"]
pane = { command = "cat" }

[[step]]
id = "after_slow"
needs = ["slow"]
pane = { command = "cat" }
`,
    );
    const t0 = Date.now();
    const { r, report } = await runJson(host, path);
    assert.equal(r.code, 1, explain(r));
    assert.ok(Date.now() - t0 < 15_000, "fail_fast does not wait for the other barrier's timeout");
    const s = byStep(report);
    assert.equal(s.bad.status, "FAILED");
    assert.match(s.bad.error!, /^pane \d+ exited \(exit code 3\) before \/\^NEVER\/ showed$/);
    assert.equal(s.bad.cancelled, false);
    assert.equal(s.slow.status, "FAILED");
    assert.equal(s.slow.cancelled, true);
    assert.equal(s.slow.error, "cancelled: bad failed (fail_fast)");
    assert.equal(s.after_bad.status, "SKIPPED");
    assert.equal(s.after_bad.error, "needs bad");
    assert.equal(s.after_slow.status, "SKIPPED");
    assert.equal(s.after_bad.surface_id, null);
    // Skipped steps created nothing: only bad's and slow's panes exist.
    assert.deepEqual(
      (await panes(host)).map((p) => p.surface_id).sort(),
      [s.bad.surface_id, s.slow.surface_id].sort(),
    );
  });
});

Deno.test("flow run: on_failure = continue runs independent branches and skips dependents of the failure", async () => {
  await withHost({}, async (host) => {
    const path = await writeFlow(
      host,
      "continue",
      `
[defaults]
timeout_secs = 20
on_failure = "continue"

[[step]]
id = "bad"
pane = { command = "sh -c 'exit 7'" }
ready = { pattern = "^NEVER" }

[[step]]
id = "bad_child"
needs = ["bad"]
pane = { command = "cat" }

[[step]]
id = "good"
pane = { command = "sh -c 'sleep 0.5; echo GOOD; exec cat'" }
ready = { pattern = "^GOOD" }
capture = { var = "good", lines = 1 }

[[step]]
id = "good_child"
needs = ["good"]
pane = { command = "sh -c 'echo CHILD; exec cat'" }
ready = { pattern = "^CHILD" }
`,
    );
    const { r, report } = await runJson(host, path);
    assert.equal(r.code, 1, explain(r));
    assert.deepEqual(report.steps.map((s) => [s.step, s.status]), [
      ["bad", "FAILED"],
      ["bad_child", "SKIPPED"],
      ["good", "READY"],
      ["good_child", "READY"],
    ]);
    assert.equal(report.captures.good, "GOOD");
    assert.equal(byStep(report).bad_child.error, "needs bad");
  });
});

Deno.test("flow run: a ready timeout exits 4; the table report names the step", async () => {
  await withHost({}, async (host) => {
    const path = await writeFlow(
      host,
      "timeout",
      `
name = "slowpoke"

[[step]]
id = "wait"
pane = { command = "sh -c 'echo not yet; exec cat'" }
ready = { pattern = "^NEVER", timeout_secs = 1 }
`,
    );
    const r = await host.cli(["flow", "run", path]);
    assert.equal(r.code, 4, explain(r));
    const lines = r.stdout.split("\n");
    assert.match(lines[0], /^STEP +STATUS +DURATION +PANE +ERROR$/);
    assert.match(lines[1], /^wait +FAILED +\d+\.\ds +\d+ +ready \/\^NEVER\/ did not show within 1s$/);
    assert.match(r.stdout, /^flow slowpoke: failed in \d+\.\ds$/m);
    // Without a terminal the live transitions are plain lines on stderr.
    assert.match(r.stderr, /^\[ +\d+\.\ds\] wait: started$/m);
    assert.match(
      r.stderr,
      /^\[ +\d+\.\ds\] wait: FAILED: ready \/\^NEVER\/ did not show within 1s \(\d+\.\ds\)$/m,
    );
  });
});

Deno.test("flow run: validation errors exit 2 and create nothing; --dry-run prints the plan and creates nothing", async () => {
  await withHost({}, async (host) => {
    const bad = await writeFlow(
      host,
      "bad",
      `
[[step]]
id = "a"
needs = ["b"]
pane = { command = "sh" }
`,
    );
    const r = await host.cli(["flow", "run", bad]);
    assert.equal(r.code, 2, explain(r));
    assert.equal(r.stdout, "");
    assert.equal(
      r.stderr,
      `paneflow: ${bad}:4:10: step[0].needs[0]: needs unknown step "b"\npaneflow: 1 problem in ${bad}; nothing ran\n`,
    );

    const good = await writeFlow(
      host,
      "good",
      `
name = "planned"
[defaults]
timeout_secs = 5
[[step]]
id = "one"
pane = { command = "sh -c 'echo HI; exec cat'" }
ready = { pattern = "^HI" }
capture = { var = "hi", lines = 1 }
[[step]]
id = "two"
needs = ["one"]
send = { target = "one", text = "got \${hi}", submit = true }
`,
    );
    const dry = await host.cli(["flow", "run", good, "--dry-run"]);
    assert.equal(dry.code, 0, explain(dry));
    assert.equal(
      dry.stdout,
      [
        "flow planned (layout even_h, on_failure fail_fast): 2 steps",
        "",
        "one",
        `  pane   sh -c 'echo HI; exec cat'  in ${host.dir}`,
        "  ready  /^HI/ within 5s",
        "  capture 1 line as ${hi}",
        "",
        "two  (after one)",
        "  send   to one (submit): got ${hi}",
        "",
      ].join("\n"),
    );
    const json = await host.cli(["flow", "run", good, "--dry-run", "--json"]);
    assert.equal(json.code, 0, explain(json));
    const plan = JSON.parse(json.stdout);
    assert.equal(plan.dry_run, true);
    assert.deepEqual(plan.steps.map((s: { key: string }) => s.key), ["one", "two"]);
    assert.deepEqual(await panes(host), []);
  });
});

Deno.test("flow run: a closed write gate fails with exit 1 before anything is created, also under --dry-run", async () => {
  await withHost({ scripting: false }, async (host) => {
    const path = await writeFlow(
      host,
      "gated",
      `
[[step]]
id = "shell"
pane = { command = "sh" }

[[step]]
id = "poke"
needs = ["shell"]
send = { target = "shell", text = "echo hi", submit = true }
`,
    );
    for (const extra of [[], ["--dry-run"], ["--json"]]) {
      const r = await host.cli(["flow", "run", path, ...extra]);
      assert.equal(r.code, 1, explain(r));
      assert.equal(r.stdout, "");
      assert.match(r.stderr, /write gate is closed: start the host with PANEFLOW_IPC_SCRIPTING=1/);
    }
    assert.deepEqual(await panes(host), []);
    // A flow that only spawns panes needs no gate.
    const plain = await writeFlow(host, "plain", `[[step]]\nid = "p"\npane = { command = "cat" }\n`);
    const ok = await host.cli(["flow", "run", plain]);
    assert.equal(ok.code, 0, explain(ok));
  });
});

Deno.test("flow run: a pane name already taken on the host fails the step instead of reusing that pane", async () => {
  await withHost({}, async (host) => {
    const made = await host.json<{ surface_id: number }>(["new", "-c", "cat", "--pane-name", "taken"]);
    const path = await writeFlow(
      host,
      "taken",
      `
[defaults]
timeout_secs = 5

[[step]]
id = "mine"
pane = { command = "sh -c 'echo MINE; exec cat'", name = "taken" }
ready = { pattern = "^MINE" }
`,
    );
    const { r, report } = await runJson(host, path);
    assert.equal(r.code, 1, explain(r));
    assert.equal(
      report.steps[0].error,
      `a pane named "taken" already runs on the host (pane ${made.surface_id}); close it or rename the step's pane`,
    );
    assert.equal((await panes(host)).length, 1);
  });
});

Deno.test("flow run: a second run on the same host replaces the named panes the first left exited", async () => {
  await withHost({}, async (host) => {
    const path = await writeFlow(
      host,
      "twice",
      `
[defaults]
timeout_secs = 5

[[step]]
id = "once"
pane = { command = "sh -c 'echo ONCE-$((6*7))'", name = "once" }
ready = { pattern = "^ONCE-42" }
`,
    );
    const first = await runJson(host, path);
    assert.equal(first.r.code, 0, explain(first.r));
    await waitUntil("the first run's pane to exit", async () => (await panes(host)).every((p) => p.exited));
    const second = await runJson(host, path);
    assert.equal(second.r.code, 0, explain(second.r));
    const left = await panes(host);
    assert.deepEqual(left.map((p) => p.name), ["once"]);
    assert.notEqual(left[0].surface_id, first.report.steps[0].surface_id);
  });
});

Deno.test("flow run: SIGINT stops the orchestration promptly and leaves the panes it created", async () => {
  await withHost({}, async (host) => {
    const path = await writeFlow(
      host,
      "interrupt",
      `
[defaults]
timeout_secs = 120

[[step]]
id = "waiting"
pane = { command = "sh -c 'echo waiting; exec cat'" }
ready = { pattern = "^NEVER" }

[[step]]
id = "also"
pane = { command = "sh -c 'echo also; exec cat'" }
ready = { pattern = "^NEVER-EITHER" }

[[step]]
id = "later"
needs = ["waiting"]
pane = { command = "cat" }
`,
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", ...MAIN, "flow", "run", path],
      env: host.env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const output = child.output();
    try {
      // Both barriers are waiting once both panes show their first line.
      await waitUntil("both flow panes to show output", async () => {
        const list = await panes(host);
        if (list.length !== 2) return false;
        const texts = await Promise.all(list.map((p) => screen(host, p.surface_id)));
        return texts.every((t) => /waiting|also/.test(t)) && list;
      }, { timeoutMs: 15_000 });
    } catch (e) {
      child.kill("SIGKILL");
      await output;
      throw e;
    }
    const t0 = Date.now();
    child.kill("SIGINT");
    const out = await output;
    const elapsed = Date.now() - t0;
    const dec = new TextDecoder();
    const r = { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
    assert.equal(r.code, 130, explain(r));
    assert.ok(elapsed < 3000, `exited ${elapsed} ms after SIGINT`);
    assert.match(r.stdout, /^waiting +FAILED .*interrupted$/m);
    assert.match(r.stdout, /^later +SKIPPED +- +- +not started: interrupted$/m);
    assert.match(r.stdout, /^flow flow: interrupted in/m);
    assert.match(r.stderr, /interrupted; panes the flow created were left as they are/);
    // The panes are still there and still running.
    const left = await panes(host);
    assert.equal(left.length, 2);
    for (const p of left) {
      const st = await host.call("surface.status", { surface_id: p.surface_id });
      assert.notEqual(st.reason, "exited");
    }
  });
});

/** The environment of a fresh CI container: PATH and HOME only (and Deno's own cache dir). */
async function cleanEnv(home: string): Promise<Record<string, string>> {
  const info = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
    .output();
  const denoDir = JSON.parse(new TextDecoder().decode(info.stdout)).denoDir as string;
  return { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home, DENO_DIR: denoDir };
}

function cliIn(env: Record<string, string>, args: string[]): Promise<RunResult> {
  return runCli(args, env, undefined, { clearEnv: true, cwd: ROOT });
}

/** Whether a host answers on the default socket of a clean environment (another user's). */
async function defaultHostAnswers(): Promise<boolean> {
  try {
    const conn = await Deno.connect({ transport: "unix", path: `/tmp/paneflow-${Deno.uid()}/paneflow.sock` });
    conn.close();
    return true;
  } catch {
    return false;
  }
}

Deno.test("flow run: with no host, an embedded one runs the demo in a clean environment and prints its captures", async () => {
  const home = await Deno.makeTempDir({ prefix: "pf-home-" });
  try {
    const env = await cleanEnv(home);
    // A host of someone else's on the default socket would be used instead: embed explicitly then.
    const extra = await defaultHostAnswers() ? ["--embedded"] : [];
    // The demo writes into a pane: with no config and no PANEFLOW_IPC_SCRIPTING the gate is closed.
    const closed = await cliIn(env, ["flow", "run", "examples/demo.flow.toml", ...extra]);
    assert.equal(closed.code, 1, explain(closed));
    assert.match(closed.stderr, /write gate is closed/);

    // Panes of the embedded host reach it (the CLI, the agents' hook) through PANEFLOW_SOCKET_PATH.
    const ping = `${home}/ping.flow.toml`;
    const command = `${paneflowCommand()} api system.ping >/dev/null && echo PING-OK $PANEFLOW_SURFACE_ID`;
    await Deno.writeTextFile(
      ping,
      `[[step]]\nid = "ping"\npane = { command = ${JSON.stringify(command)} }\n` +
        `ready = { pattern = "^PING-OK", timeout_secs = 20 }\ncapture = { var = "ping", lines = 1 }\n`,
    );
    const pinged = await cliIn(env, ["flow", "run", ping, ...extra]);
    assert.equal(pinged.code, 0, explain(pinged));
    assert.match(pinged.stdout, /^ping:\n {2}PING-OK 1$/m);

    await Deno.mkdir(`${home}/.config/paneflow`, { recursive: true });
    await Deno.writeTextFile(`${home}/.config/paneflow/config.jsonc`, `{ "ai_unrestricted": true }`);
    const r = await cliIn(env, ["flow", "run", "examples/demo.flow.toml", ...extra]);
    assert.equal(r.code, 0, explain(r));
    const socket = /running an embedded host on (\S+)/.exec(r.stderr)?.[1];
    assert.ok(socket, explain(r));
    assert.match(r.stdout, /^flow demo: ok in/m);
    assert.match(r.stdout, /^artifact:\n {2}BUILD-OK checksum=\d+$/m);
    assert.match(r.stdout, /^receipt:\n {2}consumer received BUILD-OK checksum=\d+$/m);
    // The panes' last lines, since the panes go away with the host.
    assert.match(r.stdout, /^--- build: last lines of its pane ---\n(.*\n)*BUILD-OK checksum=/m);
    // Torn down: its private socket dir is gone.
    await assert.rejects(Deno.lstat(socket.slice(0, socket.lastIndexOf("/"))), Deno.errors.NotFound);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("flow run --keep-host: starts a detached host that outlives the run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pf-keep-" });
  const socket = `${dir}/s.sock`;
  const env = {
    ...(await cleanEnv(Deno.env.get("HOME") ?? dir)),
    PANEFLOW_SOCKET_PATH: socket,
    PANEFLOW_CONFIG: `${dir}/none.jsonc`,
    PANEFLOW_IPC_SCRIPTING: "1",
  };
  const call = async <M extends ResultMethod>(method: M, params: unknown = {}): Promise<Result<M>> => {
    const { Client } = await import("../src/client/client.ts");
    const c = await Client.connect(socket);
    try {
      return await c.call(method, params);
    } finally {
      c.close();
    }
  };
  try {
    const r = await cliIn(env, ["flow", "run", "examples/demo.flow.toml", "--keep-host", "--json"]);
    assert.equal(r.code, 0, explain(r));
    const report = JSON.parse(r.stdout) as Report;
    assert.equal(report.host, socket);
    const left = (await call("surface.list")).surfaces;
    assert.deepEqual(left.map((p) => p.name).sort(), ["build", "consumer"]);
    const text = (await call("surface.read", {
      surface_id: byStep(report).deliver.surface_id,
      fenced: false,
    })).text;
    assert.match(text, /^consumer received BUILD-OK/m);
  } finally {
    await call("system.shutdown").catch(() => {});
    await waitUntil("the detached host to stop", async () => {
      try {
        (await Deno.connect({ transport: "unix", path: socket })).close();
        return false;
      } catch {
        return true;
      }
    });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("flow validate and run check step panes against the machine as up does: nothing runs", async () => {
  await withHost({ config: '{"agents":{"ghost":{"command":"ghost-agent-zz --fast"}}}' }, async (host) => {
    const path = await writeFlow(
      host,
      "machine",
      `
[[step]]
id = "fine"
pane = { command = "sh -c 'echo FINE; exec cat'" }

[[step]]
id = "haunted"
pane = { agent = "ghost" }
`,
    );
    for (const verb of ["validate", "run"]) {
      const r = await host.cli(["flow", verb, path]);
      assert.equal(r.code, 2, `flow ${verb}: ${r.stderr}`);
      assert.match(
        r.stderr,
        /machine\.flow\.toml:\d+:\d+: step\[1\]\.pane\.agent: agent "ghost" runs "ghost-agent-zz --fast", but "ghost-agent-zz" is not on PATH/,
      );
      assert.match(r.stderr, /1 problem in .*; nothing ran/);
    }
    assert.deepEqual(await panes(host), [], "no step's pane was created");
  });
});
