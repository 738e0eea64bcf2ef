/**
 * A pane's program starts with exactly its own terminal.
 * From inside panes made by every path (new, split, up, an agent launcher,
 * a flow step; spread over both pane workers) a probe lists its
 * descriptors, writes a token into every one above 2 and tries to read
 * from each: none may exist, and the victim pane shows nothing.
 */
import assert from "node:assert/strict";
import { readPane, waitUntil, withHost } from "./_harness.ts";

const PROBE = new URL("./fixtures/fd_probe.py", import.meta.url).pathname;
const PYTHON = (await new Deno.Command("python3", {
  args: ["-c", "import sys; print(sys.executable)"],
  stdout: "piped",
  stderr: "null",
}).output().catch(() => null))?.stdout;
const python = PYTHON ? new TextDecoder().decode(PYTHON).trim() : "";

Deno.test({
  name: "fds: panes from new, split, up, an agent launcher and a flow, in both workers, hold only 0-2",
  ignore: !python,
  fn: async () => {
    const token = `TOK${crypto.randomUUID().slice(0, 8)}`;
    const probe = `${python} ${PROBE} ${token}`;
    const config = JSON.stringify({ host: { pane_workers: 2 }, agents: { probe: { command: probe } } });
    await withHost({ config }, async (host) => {
      const victim = await host.call("workspace.create", {
        pane_name: "victim",
        command: "cat",
      });
      const ids: Record<string, number> = {};
      const made = await host.call("workspace.create", {
        pane_name: "new1",
        command: probe,
      });
      ids.new1 = made.surface_id;
      ids.new2 = (await host.json<{ surface_id: number }>(["new", "--pane-name", "new2", "-c", probe]))
        .surface_id;
      ids.split1 = (await host.call("surface.split", {
        surface_id: ids.new1,
        direction: "h",
        command: probe,
        name: "split1",
      })).surface_id;
      ids.split2 = (await host.call("surface.split", {
        surface_id: victim.surface_id,
        direction: "v",
        command: probe,
        name: "split2",
      })).surface_id;
      const spec = `${host.dir}/probe.toml`;
      await Deno.writeTextFile(
        spec,
        `name = "probes"\n[[panes]]\nname = "up1"\ncommand = "${probe}"\n[[panes]]\nname = "agent1"\nagent = "probe"\n`,
      );
      const up = await host.cli(["up", spec]);
      assert.equal(up.code, 0, up.stderr);
      const flow = `${host.dir}/probe.flow.toml`;
      await Deno.writeTextFile(
        flow,
        `[[step]]\nid = "flow1"\npane = { command = "${probe}" }\nready = { pattern = "^LEAKS", timeout_secs = 30 }\n`,
      );
      const run = await host.cli(["flow", "run", flow, "--json"]);
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);

      const list = (await host.call("surface.list"))
        .surfaces;
      const probes = list.filter((s) => s.surface_id !== victim.surface_id);
      assert.ok(probes.length >= 7, JSON.stringify(list));
      for (const s of probes) {
        const screen = await waitUntil(`probe output in pane ${s.surface_id} (${s.name})`, async () => {
          const text = await readPane(host, String(s.surface_id));
          return /LEAKS \[/.test(text) && text;
        });
        assert.match(screen, /^FDS 0 1 2$/m, `pane ${s.surface_id} (${s.name}):\n${screen}`);
        assert.match(screen, /^LEAKS \[\]$/m, `pane ${s.surface_id} (${s.name}):\n${screen}`);
      }
      // The victim echoes whatever reaches its terminal: nothing did.
      const victimScreen = await readPane(host, "victim");
      assert.ok(!victimScreen.includes(token), victimScreen);
      // And the host's own descriptors are all close-on-exec (a child it starts inherits none).
      const identify = await host.call("system.identify");
      const leaky: string[] = [];
      for (const e of Deno.readDirSync(`/proc/${identify.pid}/fd`)) {
        const n = Number(e.name);
        if (n < 3) continue;
        try {
          const info = await Deno.readTextFile(`/proc/${identify.pid}/fdinfo/${n}`);
          const flags = parseInt(/flags:\s+(\d+)/.exec(info)![1], 8);
          if (!(flags & 0o2000000)) {
            leaky.push(`${n}=${await Deno.readLink(`/proc/${identify.pid}/fd/${n}`)}`);
          }
        } catch { /* closed meanwhile */ }
      }
      assert.deepEqual(leaky, []);
    });
  },
});

Deno.test("fds: the spawn step hands the program its environment unchanged (PS1 and PS2 kept, nothing added)", async () => {
  await withHost({}, async (host) => {
    // No shell in between: the pane runs env(1) itself.
    await host.call("workspace.create", {
      pane_name: "env",
      command: "exec env",
      env: { PS1: "p1> ", PS2: "p2> ", KEEP: "k" },
    });
    const screen = await waitUntil("env's output", async () => {
      const text = await readPane(host, "env");
      return text.includes("KEEP=k") && text;
    });
    assert.match(screen, /^PS1=p1>\s*$/m);
    assert.match(screen, /^PS2=p2>\s*$/m);
    assert.doesNotMatch(screen, /PANEFLOW_WRAP/);
    assert.match(screen, /^PANEFLOW_PANE_TOKEN=[0-9a-f]{32}$/m);
  });
});
