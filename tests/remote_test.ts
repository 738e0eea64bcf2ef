/**
 * Remote hosts over a real OpenSSH server: every path goes through real
 * `ssh` to a loopback sshd with throwaway keys (tests/_sshd.ts). The "remote"
 * paneflow is this checkout, serving its own socket.
 *
 * @module
 */

import assert from "node:assert/strict";
import { ROOT, runCli, startHost, waitUntil } from "./_harness.ts";
import { connectBridge } from "./_mcp.ts";
import { withWorld } from "./_remote_world.ts";
import { sshdMissing } from "./_sshd.ts";

const missing = sshdMissing();

Deno.test({
  name:
    "remote: verbs run on a host over ssh exactly as locally (new, ls, send, read, wait), reusing one ControlMaster",
  ignore: missing !== null,
  async fn() {
    await withWorld(async (w) => {
      const made = await w.cli(["--host", "box", "new", "--pane-name", "far", "-c", "cat"]);
      assert.equal(made.code, 0, made.stderr);
      // The pane is on the remote host, not the local one.
      const remoteLs = await w.remote.json<{ surfaces: { name: string }[] }>(["ls", "--all"]);
      assert.deepEqual(remoteLs.surfaces.map((s) => s.name), ["far"]);
      const localLs = await w.local.json<{ surfaces: unknown[] }>(["ls", "--all"]);
      assert.deepEqual(localLs.surfaces, []);

      const ls = await w.cli(["ls", "--all", "--host", "box"]);
      assert.equal(ls.code, 0, ls.stderr);
      assert.deepEqual(JSON.parse(ls.stdout).surfaces.map((s: { name: string }) => s.name), ["far"]);

      const sent = await w.cli(["--host=box", "send", "far", "hello over ssh\r"]);
      assert.equal(sent.code, 0, sent.stderr);
      const waited = await w.cli([
        "--host",
        "box",
        "wait",
        "--match",
        "far",
        "--pattern",
        "hello over ssh",
        "--timeout",
        "20",
      ]);
      assert.equal(waited.code, 0, waited.stderr);
      const read = await w.cli(["--host", "box", "read", "far", "--raw"]);
      assert.equal(read.code, 0, read.stderr);
      assert.match(read.stdout, /hello over ssh/);

      // wait --match host:sel reaches the config's host without --host.
      const prefixed = await w.cli([
        "wait",
        "--match",
        "box:far",
        "--pattern",
        "hello over ssh",
        "--timeout",
        "20",
      ]);
      assert.equal(prefixed.code, 0, prefixed.stderr);

      // PANEFLOW_HOST does the same as --host.
      const viaEnv = await runCli(["read", "far", "--raw"], { ...w.env, PANEFLOW_HOST: "box" });
      assert.equal(viaEnv.code, 0, viaEnv.stderr);
      assert.match(viaEnv.stdout, /hello over ssh/);

      // The ControlMaster is up and reused: exactly one master socket.
      const masters = [...Deno.readDirSync(`${w.local.dir}`)].filter((e) => e.name.startsWith("ssh-"));
      assert.equal(masters.length, 1, JSON.stringify(masters));

      // A selector with no match is exit 3 remotely too.
      const none = await w.cli(["--host", "box", "read", "nope"]);
      assert.equal(none.code, 3, none.stderr);
    });
  },
});

Deno.test({
  name:
    "remote: hosts lists reachability and versions; ps/ls --all-hosts show a HOST column with one host down",
  ignore: missing !== null,
  async fn() {
    await withWorld(async (w) => {
      await w.remote.call("workspace.create", {
        command: "sleep 600",
        pane_name: "remote-pane",
        cwd: w.remote.dir,
      });
      await w.local.call("workspace.create", {
        command: "sleep 600",
        pane_name: "local-pane",
        cwd: w.local.dir,
      });
      const hosts = await w.cli(["hosts", "--json"]);
      assert.equal(hosts.code, 1, hosts.stderr); // "down" is unreachable
      const rows = JSON.parse(hosts.stdout).hosts as {
        name: string;
        reachable: boolean;
        version?: string;
        error?: string;
      }[];
      assert.equal(rows.find((h) => h.name === "box")?.reachable, true);
      assert.equal(rows.find((h) => h.name === "box")?.version, "0.1.0");
      const down = rows.find((h) => h.name === "down")!;
      assert.equal(down.reachable, false);
      assert.match(down.error!, /Cannot reach host "down"/);

      const ls = await w.cli(["ls", "--all-hosts", "--human"]);
      assert.equal(ls.code, 1, ls.stderr); // a host was unreachable: reported, not fatal
      assert.match(ls.stdout, /^HOST\s+ID\s+NAME/m);
      assert.match(ls.stdout, /^local\s+\d+\s+local-pane/m);
      assert.match(ls.stdout, /^box\s+\d+\s+remote-pane/m);
      assert.match(ls.stderr, /Cannot reach host "down"/);
      assert.equal(ls.stderr.trim().split("\n").length, 1, ls.stderr);

      const ps = await w.cli(["ps", "--all-hosts", "--json"]);
      const parsed = JSON.parse(ps.stdout);
      assert.ok(Array.isArray(parsed.hosts), ps.stdout);
      assert.deepEqual(parsed.hosts.map((h: { host: string; ok: boolean }) => [h.host, h.ok]), [
        ["local", true],
        ["box", true],
        ["down", false],
      ]);
    });
  },
});

Deno.test({
  name:
    "remote: failures are one line naming the host — unknown name, unknown host key, remote paneflow missing, sshd gone mid-wait",
  ignore: missing !== null,
  async fn() {
    await withWorld(async (w) => {
      const unknown = await w.cli(["--host", "nowhere", "ls"]);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /No host "nowhere" in the config's "hosts" \(known: box, down\)/);

      const cfg = JSON.parse(await Deno.readTextFile(w.env.PANEFLOW_CONFIG));
      cfg.hosts.nopf = { ssh: w.sshd.alias, paneflow: "/nonexistent/paneflow" };
      await Deno.writeTextFile(w.env.PANEFLOW_CONFIG, JSON.stringify(cfg));
      const nopf = await w.cli(["--host", "nopf", "ls"]);
      assert.equal(nopf.code, 1);
      assert.match(nopf.stderr, /paneflow is not installed on host "nopf"/);
      assert.equal(nopf.stderr.trim().split("\n").length, 1, nopf.stderr);

      // A host key we do not know (on a fresh connection: the ControlMaster would skip the check).
      await Deno.writeTextFile(`${w.sshd.dir}/known_hosts`, "");
      const env = { ...w.env, PANEFLOW_SOCKET_PATH: `${w.local.dir}/other/s.sock` };
      const key = await runCli(["--host", "ssh://127.0.0.1:" + w.sshd.port, "ls"], env);
      assert.equal(key.code, 1);
      assert.match(key.stderr, /host key is unknown or changed/);

      // Restore the key; a wait that loses its connection mid-way ends with a clear error.
      await Deno.writeTextFile(
        `${w.sshd.dir}/known_hosts`,
        `[127.0.0.1]:${w.sshd.port} ${
          (await Deno.readTextFile(`${w.sshd.dir}/host_key.pub`)).split(" ").slice(0, 2).join(" ")
        }\n`,
      );
      await w.remote.call("workspace.create", { command: "sleep 600", pane_name: "idle", cwd: w.remote.dir });
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "--quiet",
          `--config=${ROOT}deno.json`,
          `${ROOT}main.ts`,
          "--host",
          "box",
          "wait",
          "--match",
          "idle",
          "--pattern",
          "NEVER",
          "--timeout",
          "60",
        ],
        env: w.env,
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      // Subscribed on the remote host (its event stream shows in system.clients), then the network drops.
      await waitUntil("the remote wait to subscribe", async () => {
        const { clients } = await w.remote.call("system.clients");
        return clients.some((c) => c.stream);
      }, { timeoutMs: 30_000 });
      await w.sshd.dropConnections();
      const out = await child.output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.notEqual(out.code, 0);
      assert.match(stderr, /host "box"/);
      assert.equal(stderr.trim().split("\n").length, 1, stderr);
    });
  },
});

Deno.test({
  name: "remote: paneflow mcp --host serves the remote host's panes",
  ignore: missing !== null,
  async fn() {
    await withWorld(async (w) => {
      await w.remote.call("workspace.create", {
        command: "echo REMOTE-MCP-TOKEN; exec sleep 600",
        pane_name: "far",
        cwd: w.remote.dir,
      });
      const bridge = await connectBridge(w.local.socket, {
        args: ["run", "-A", "--quiet", `--config=${ROOT}deno.json`, `${ROOT}main.ts`, "mcp", "--host", "box"],
        env: { PANEFLOW_CONFIG: w.env.PANEFLOW_CONFIG, PANEFLOW_SSH: w.sshd.ssh, HOME: w.env.HOME },
      });
      try {
        const list = await bridge.client.callTool({ name: "list_panes", arguments: {} });
        assert.match(JSON.stringify(list), /far/);
        const read = await waitUntil("the remote pane's text through MCP", async () => {
          const r = await bridge.client.callTool({ name: "read_pane", arguments: { target: "far" } });
          return JSON.stringify(r).includes("REMOTE-MCP-TOKEN") && r;
        }, { timeoutMs: 20_000 });
        assert.ok(read);
      } finally {
        await bridge.close();
      }
    });
  },
});

Deno.test("remote: a host started with PANEFLOW_HOST exported gives its panes none (they drive their own host)", async () => {
  const host = await startHost({ env: { PANEFLOW_HOST: "box" } });
  try {
    const { surface_id } = await host.call("workspace.create", {
      command: "echo HOST=[${PANEFLOW_HOST-unset}]; exec sleep 600",
      cwd: host.dir,
    });
    await waitUntil("the pane to print its PANEFLOW_HOST", async () => {
      const r = await host.call("surface.read", { surface_id, fenced: false });
      return r.text.includes("HOST=[unset]");
    });
  } finally {
    await host.stop();
  }
});
