/**
 * Every connection knows who is calling: a program started inside a pane, in
 * every way a shell can start it, is that pane (or a guest once it has left
 * the pane's session, cleared its environment and been orphaned); never the
 * owner. The classification table is docs/security.md's.
 */
import assert from "node:assert/strict";
import { paneflowCommand } from "./_claude.ts";
import { waitUntil, withHost } from "./_harness.ts";

interface Caller {
  kind: string;
  surface_id?: number;
  name?: string | null;
  why: string;
  caps: Record<string, unknown>;
}

Deno.test("caps: callers are classified from inside real panes: child, subshell, job, nohup, setsid, double fork, env -i, combined, forged token", async () => {
  await withHost({ scripting: false }, async (host) => {
    const pf = paneflowCommand();
    const out = (name: string) => `${host.dir}/${name}.json`;
    const id = `${pf} api system.identify`;
    // The identity to write, as a shell command run by each case.
    const bare = `PATH="$PATH" HOME="$HOME" PANEFLOW_SOCKET_PATH="$PANEFLOW_SOCKET_PATH"`;
    const other = await host.call("workspace.create", {
      pane_name: "other",
      command: "exec sleep 600",
    });
    const otherToken = await waitUntil("the other pane's token", async () => {
      const s = await host.call("surface.status", { surface_id: other.surface_id }).catch(
        () => null,
      );
      if (!s) return null;
      const list = await host.call("surface.list");
      const pid = list.surfaces.find((x) => x.surface_id === other.surface_id)!.pid;
      const env = await Deno.readTextFile(`/proc/${pid}/environ`).catch(() => "");
      return env.split("\0").find((e) => e.startsWith("PANEFLOW_PANE_TOKEN="))?.slice(20);
    });
    const cases: Record<string, { cmd: string; kind: string; why?: RegExp }> = {
      child: { cmd: `${id} > ${out("child")}`, kind: "pane", why: /session/ },
      subshell: { cmd: `( ${id} > ${out("subshell")} )`, kind: "pane" },
      job: { cmd: `${id} > ${out("job")} & wait`, kind: "pane" },
      nohup: { cmd: `nohup ${id} > ${out("nohup")} 2>/dev/null`, kind: "pane" },
      setsid: { cmd: `setsid ${id} > ${out("setsid")}`, kind: "pane", why: /ancestor/ },
      double_fork: {
        cmd: `( ( sleep 0.2; ${id} > ${out("double_fork")} ) & )`,
        kind: "pane",
        why: /session/,
      },
      env_i: { cmd: `env -i ${bare} ${id} > ${out("env_i")}`, kind: "pane" },
      // Out of the session (setsid -f forks: its child is orphaned) with the environment kept: the marker.
      setsid_fork: { cmd: `setsid -f sh -c '${id} > ${out("setsid_fork")}'`, kind: "guest", why: /carries/ },
      // Out of the session, environment cleared, double-forked: orphaned, no marker, no terminal.
      combined: {
        cmd: `setsid -f env -i ${bare} sh -c '( ( sleep 0.2; ${id} > ${out("combined")} ) & )'`,
        kind: "guest",
        why: /detached/,
      },
      // Another pane's token and id in the environment: still this pane.
      forged: {
        cmd: `PANEFLOW_PANE_TOKEN=${otherToken} PANEFLOW_SURFACE_ID=${other.surface_id} ${id} > ${
          out("forged")
        }`,
        kind: "pane",
      },
    };
    const panes = new Map<string, number>();
    for (const [name, c] of Object.entries(cases)) {
      const s = await host.call("surface.split", {
        surface_id: other.surface_id,
        direction: "h",
        name,
        command: `${c.cmd}; exec sleep 600`,
      });
      panes.set(name, s.surface_id);
    }
    for (const [name, c] of Object.entries(cases)) {
      const got = await waitUntil(`${name}'s identity`, async () => {
        const text = await Deno.readTextFile(out(name)).catch(() => "");
        return text.includes("}") && (JSON.parse(text).caller as Caller);
      }, { timeoutMs: 60_000 });
      assert.equal(got.kind, c.kind, `${name}: ${JSON.stringify(got)}`);
      if (c.kind === "pane") {
        assert.equal(got.surface_id, panes.get(name), `${name} is its own pane: ${JSON.stringify(got)}`);
        assert.deepEqual(got.caps, { read: "workspace", msg: "workspace", hook: "self" });
      } else {
        assert.deepEqual(got.caps, { read: "all" }, `${name}: a guest reads, nothing else`);
      }
      if (c.why) assert.match(got.why, c.why, name);
    }
    // Outside every pane: the owner, with every right.
    const mine = (await host.call("system.identify")).caller;
    assert.equal(mine.kind, "owner");
    assert.equal(mine.caps.write, "all");
    const cli = JSON.parse((await host.cli(["api", "system.identify"])).stdout).caller as Caller;
    assert.equal(cli.kind, "owner", cli.why);
  });
});
