/**
 * Flows across machines over a real OpenSSH server (tests/_sshd.ts): a step
 * with `host = "box"` spawns its pane on the "remote" host (this checkout
 * serving its own socket, reached through real `ssh`), captures there, and
 * sends cross hosts by step id; validation refuses unknown and unreachable
 * hosts before anything starts.
 *
 * @module
 */

import assert from "node:assert/strict";
import { ROOT, type RunResult, type TestHost, waitUntil } from "./_harness.ts";
import { REMOTE_PANEFLOW, withWorld as withRemoteWorld, type World } from "./_remote_world.ts";
import { sshdMissing } from "./_sshd.ts";

const missing = sshdMissing();
if (missing) console.error(`remote_flow_test: skipped: ${missing}`);
/** The world, with `cold`: a machine where paneflow is installed but no host runs yet. */
function withWorld(fn: (w: World) => Promise<void>, opts: { remoteScripting?: boolean } = {}): Promise<void> {
  return withRemoteWorld(fn, {
    ...opts,
    moreHosts: (remote, sshd) => ({
      cold: { ssh: sshd.alias, paneflow: REMOTE_PANEFLOW, socket: `${remote.dir}/cold/s.sock` },
    }),
  });
}

interface Pane {
  surface_id: number;
  name: string | null;
}

async function names(host: TestHost): Promise<(string | null)[]> {
  return (await host.call("surface.list", {})).surfaces.map((s) => s.name);
}

async function screenOf(host: TestHost, name: string): Promise<string> {
  const pane = (await host.call("surface.list", {})).surfaces.find((s) => s.name === name);
  assert.ok(pane, `no pane "${name}"`);
  return (await host.call("surface.read", {
    surface_id: pane.surface_id,
    lines: 100,
    fenced: false,
  })).text;
}

function explain(r: RunResult): string {
  return `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
}

Deno.test({
  name:
    "flow across machines: a remote step's pane, capture and ready run on the remote host; its value crosses to a local pane and back by step id; host per step",
  ignore: missing !== null,
  async fn() {
    await withWorld(async (w) => {
      const path = `${w.local.dir}/across.flow.toml`;
      // The remote pane prints its own host's socket: a value only that machine's host knows.
      await Deno.writeTextFile(
        path,
        `
name = "across"

[defaults]
timeout_secs = 60

[[step]]
id = "far"
host = "box"
pane = { cwd = "${w.remote.dir}", command = "sh -c 'echo SOCK=$PANEFLOW_SOCKET_PATH; exec cat'" }
ready = { pattern = "^SOCK=/" }
capture = { var = "token", lines = 1 }

[[step]]
id = "near"
needs = ["far"]
pane = { command = "cat" }

[[step]]
id = "tell_near"
needs = ["near"]
send = { target = "near", text = "got \${token}\\r" }
ready = { pattern = "^got SOCK=" }
capture = { var = "echoed", lines = 1 }

[[step]]
id = "tell_far"
needs = ["far", "tell_near"]
send = { target = "far", text = "back \${echoed}\\r" }
ready = { pattern = "^back got SOCK=" }
`,
      );
      const r = await w.cli(["flow", "run", path]);
      assert.equal(r.code, 0, explain(r));
      // Panes live where their steps said.
      assert.deepEqual(await names(w.remote), ["far"]);
      assert.deepEqual(await names(w.local), ["near"]);
      // The remote value went into the local pane, and back into the remote one.
      assert.match(await screenOf(w.local, "near"), new RegExp(`^got SOCK=${w.remote.socket}$`, "m"));
      assert.match(await screenOf(w.remote, "far"), new RegExp(`^back got SOCK=${w.remote.socket}$`, "m"));
      // The report has a HOST column; a send is reported on its target's host.
      assert.match(r.stdout, /^STEP\s+HOST\s+STATUS/m);
      assert.match(r.stdout, /^far\s+box\s+READY/m);
      assert.match(r.stdout, /^near\s+local\s+READY/m);
      assert.match(r.stdout, /^tell_near\s+local\s+READY/m);
      assert.match(r.stdout, /^tell_far\s+box\s+READY/m);
      assert.match(r.stdout, new RegExp(`token:\\n  SOCK=${w.remote.socket}`));
      // Live transitions name the host of remote steps.
      assert.match(r.stderr, /\] far@box: started/);
      assert.match(r.stderr, /\] far@box: pane \d+ on box/);
      assert.match(r.stderr, /\] near: started/);

      // --json, with this machine's part on an embedded host: the remote step still goes to box.
      const path2 = `${w.local.dir}/embedded.flow.toml`;
      await Deno.writeTextFile(
        path2,
        `
name = "embedded"
[defaults]
timeout_secs = 60

[[step]]
id = "far2"
host = "box"
pane = { cwd = "~", command = "sh -c 'echo HOME=$HOME; echo REMOTE-UP; exec cat'" }
ready = { pattern = "^REMOTE-UP" }

[[step]]
id = "near2"
needs = ["far2"]
pane = { command = "sh -c 'echo LOCAL-UP; exec cat'" }
ready = { pattern = "^LOCAL-UP" }
`,
      );
      const j = await w.cli(["flow", "run", path2, "--json", "--embedded"]);
      assert.equal(j.code, 0, explain(j));
      const report = JSON.parse(j.stdout);
      assert.equal(report.host, "embedded");
      assert.deepEqual(
        report.steps.map((s: { step: string; host: string; status: string }) => [s.step, s.host, s.status]),
        [["far2", "box", "READY"], ["near2", "local", "READY"]],
      );
      // The embedded host's last screens are its own panes only.
      assert.deepEqual(Object.keys(report.final_screens), ["near2"]);
      assert.deepEqual(await names(w.remote), ["far", "far2"]);
      assert.deepEqual(await names(w.local), ["near"]);
      // cwd "~" is the remote user's home, expanded there.
      assert.match(await screenOf(w.remote, "far2"), /^HOME=\//m);
    });
  },
});

Deno.test({
  name:
    "flow across machines: validate and run refuse an unknown host, an unreachable one and a relative remote cwd, at the step's line, before anything starts",
  ignore: missing !== null,
  async fn() {
    await withWorld(async (w) => {
      const path = `${w.local.dir}/bad.flow.toml`;
      await Deno.writeTextFile(
        path,
        `name = "bad"
[[step]]
id = "here"
pane = { command = "cat" }

[[step]]
id = "gone"
host = "nowhere"
pane = { command = "cat", cwd = "/" }

[[step]]
id = "rel"
host = "box"
pane = { command = "cat", cwd = "src" }
`,
      );
      const v = await w.cli(["flow", "validate", path]);
      assert.equal(v.code, 2, explain(v));
      assert.match(
        v.stderr,
        new RegExp(
          `${path}:8:\\d+: step\\[1\\]\\.host: no host "nowhere" in the config's "hosts" \\(known: box, down, cold\\)`,
        ),
      );
      assert.match(
        v.stderr,
        new RegExp(`${path}:14:\\d+: step\\[2\\]\\.pane\\.cwd: "src" is relative: a step on host "box"`),
      );

      const down = `${w.local.dir}/down.flow.toml`;
      await Deno.writeTextFile(
        down,
        `name = "down"
[[step]]
id = "here"
pane = { command = "cat" }

[[step]]
id = "there"
host = "down"
pane = { command = "cat", cwd = "/" }
`,
      );
      const dv = await w.cli(["flow", "validate", down]);
      assert.equal(dv.code, 2, explain(dv));
      const lines = dv.stderr.trim().split("\n");
      assert.equal(lines.length, 2, dv.stderr); // the problem, then the summary
      assert.match(lines[0], new RegExp(`${down}:8:\\d+: step\\[1\\]\\.host: Cannot reach host "down": `));
      const run = await w.cli(["flow", "run", down]);
      assert.equal(run.code, 2, explain(run));
      assert.match(run.stderr, /step\[1\]\.host: Cannot reach host "down"/);
      assert.match(run.stderr, /nothing ran/);
      // Nothing started on this machine.
      assert.deepEqual(await names(w.local), []);

      // A reachable host validates (with no pane created there).
      const ok = `${w.local.dir}/ok.flow.toml`;
      await Deno.writeTextFile(ok, `[[step]]\nid = "x"\nhost = "box"\npane = { command = "cat" }\n`);
      const okv = await w.cli(["flow", "validate", ok, "--json"]);
      assert.equal(okv.code, 0, explain(okv));
      assert.deepEqual(JSON.parse(okv.stdout).hosts, ["box"]);
      assert.deepEqual(await names(w.remote), []);

      // A machine with no host running: validate starts nothing there; run starts its host.
      const cold = `${w.local.dir}/cold.flow.toml`;
      const coldSocket = `${w.remote.dir}/cold/s.sock`;
      await Deno.writeTextFile(
        cold,
        `[[step]]\nid = "c"\nhost = "cold"\npane = { command = "sh -c 'echo COLD-UP; exec sleep 600'" }\n` +
          `ready = { pattern = "^COLD-UP", timeout_secs = 60 }\n`,
      );
      const cv = await w.cli(["flow", "validate", cold]);
      assert.equal(cv.code, 0, explain(cv));
      assert.equal(await Deno.stat(coldSocket).then(() => true, () => false), false);
      const cr = await w.cli(["flow", "run", cold, "--json"]);
      try {
        assert.equal(cr.code, 0, explain(cr));
        assert.equal(JSON.parse(cr.stdout).steps[0].host, "cold");
      } finally {
        // Stop the host the run started there (its write gate is closed: no system.shutdown).
        const { Client } = await import("../src/client/client.ts");
        const answeringPid = async (path: string) => {
          const c = await Client.tryConnect(path);
          if (!c) return null;
          try {
            return (await c.call("system.identify")).pid;
          } finally {
            c.close();
          }
        };
        const pid = await answeringPid(coldSocket);
        assert.ok(pid, "a host answers on the cold socket");
        Deno.kill(pid, "SIGTERM");
        await waitUntil("the started host to stop", async () => (await answeringPid(coldSocket)) === null, {
          timeoutMs: 20_000,
          intervalMs: 200,
        });
      }
    });
  },
});

Deno.test({
  name:
    "flow across machines: a closed write gate on the remote host a flow sends to fails before anything starts (run and --dry-run); --host on flow is refused",
  ignore: missing !== null,
  async fn() {
    await withWorld(async (w) => {
      const path = `${w.local.dir}/gate.flow.toml`;
      await Deno.writeTextFile(
        path,
        `name = "gate"
[[step]]
id = "here"
pane = { command = "cat" }

[[step]]
id = "there"
host = "box"
pane = { command = "cat" }

[[step]]
id = "poke"
needs = ["there"]
send = { target = "there", text = "hi\\r" }
`,
      );
      for (const extra of [[], ["--dry-run"]]) {
        const r = await w.cli(["flow", "run", path, ...extra]);
        assert.equal(r.code, 1, explain(r));
        assert.match(r.stderr, /writes into panes on host "box" .*write gate is closed/);
        assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      }
      assert.deepEqual(await names(w.local), []);
      assert.deepEqual(await names(w.remote), []);
      // Validation does not look at gates.
      const v = await w.cli(["flow", "validate", path]);
      assert.equal(v.code, 0, explain(v));

      const h = await w.cli(["--host", "box", "flow", "run", path]);
      assert.equal(h.code, 2, explain(h));
      assert.match(h.stderr, /--host does not apply to flow/);
    }, { remoteScripting: false });
  },
});

Deno.test({
  name:
    "flow across machines: a remote host lost mid-run fails the step waiting there with one line naming it; the local step is unaffected",
  ignore: missing !== null,
  async fn() {
    await withWorld(async (w) => {
      const path = `${w.local.dir}/lost.flow.toml`;
      await Deno.writeTextFile(
        path,
        `name = "lost"
[defaults]
timeout_secs = 120
on_failure = "continue"

[[step]]
id = "far"
host = "box"
pane = { cwd = "/", command = "sh -c 'echo WAITING; exec sleep 600'" }
ready = { pattern = "^NEVER" }

[[step]]
id = "near"
pane = { command = "sh -c 'echo LOCAL-OK; exec sleep 600'" }
ready = { pattern = "^LOCAL-OK" }
`,
      );
      const t0 = Date.now();
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "--quiet",
          `--config=${ROOT}deno.json`,
          `${ROOT}main.ts`,
          "flow",
          "run",
          path,
          "--json",
        ],
        env: w.env,
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      // The remote step is waiting on its barrier: its pane runs there.
      await waitUntil("the remote pane to run", async () => (await names(w.remote)).includes("far"), {
        timeoutMs: 60_000,
        intervalMs: 200,
      });
      await w.sshd.dropConnections();
      const out = await child.output();
      const dec = new TextDecoder();
      const r = { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
      assert.equal(r.code, 1, explain(r));
      assert.ok(Date.now() - t0 < 100_000, "it did not wait for the ready timeout");
      const report = JSON.parse(r.stdout);
      const far = report.steps.find((s: { step: string }) => s.step === "far");
      const near = report.steps.find((s: { step: string }) => s.step === "near");
      assert.equal(far.status, "FAILED", r.stdout);
      assert.equal(far.host, "box");
      assert.match(far.error, /host "box"/);
      assert.doesNotMatch(far.error, /\n/);
      assert.equal(far.timeout, false);
      assert.equal(near.status, "READY", r.stdout);
    });
  },
});
