/**
 * The result and event schemas of src/spec/ cannot lie: real replies of
 * methods of every family, and real events and notifications, validate
 * against them, and carry no field the schema leaves out (docs/protocol.md
 * is rendered from these schemas).
 *
 * @module
 */
import assert from "node:assert/strict";
import type { z } from "zod";
import { results } from "../src/spec/results.ts";
import { eventSchemas } from "../src/spec/events.ts";
import { Client } from "../src/client/client.ts";
import { ROOT, waitUntil, withHost } from "./_harness.ts";
import { PwClient, spawnPaneflow } from "./_pw.ts";

/** `value` fits `schema` exactly: valid, and no field dropped as undeclared. */
function fits(schema: z.ZodType, value: unknown, what: string): void {
  const r = schema.safeParse(value);
  assert.ok(
    r.success,
    `${what}: ${r.success ? "" : JSON.stringify(r.error.issues)}\n${JSON.stringify(value)}`,
  );
  assert.deepEqual(r.data, value, `${what} carries a field its schema does not declare`);
}

Deno.test("protocol: real replies of every family match their result schemas", async () => {
  await withHost({}, async (host) => {
    const client = await Client.connect(host.socket);
    client.timeoutMs = 30_000;
    const checked = new Set<string>();
    const call = async (method: string, params: unknown = {}) => {
      const res = await client.request(method, params);
      assert.equal(res.error, undefined, `${method}: ${JSON.stringify(res.error)}`);
      fits(results[method as keyof typeof results], res.result, method);
      checked.add(method);
      return res.result as Record<string, unknown>;
    };
    try {
      for (
        const m of ["system.ping", "system.identify", "system.capabilities", "system.clients", "system.stats"]
      ) {
        await call(m);
      }
      await call("system.hello", { name: "results-test" });
      await call("workspace.list");
      const ws = await call("workspace.create", { name: "a", command: "PS1='$ ' exec sh" });
      const id = ws.surface_id as number;
      await call("workspace.current");
      await call("workspace.list");
      await call("surface.list");
      await waitUntil(
        "the shell's prompt",
        async () => (await call("surface.is_ready", { surface_id: id })).ready,
      );
      await call("surface.ask", {
        surface_id: id,
        text: "echo ASK-$((20+1))",
        marker: "ASK-21",
        timeout_ms: 10_000,
      });
      const split = await call("surface.split", { direction: "h", surface_id: id, command: "/bin/sh" });
      await call("surface.send_text", { surface_id: id, text: "echo RESULTS-OK\r" });
      await call("surface.send_keystroke", { surface_id: id, keystroke: "tab" });
      await waitUntil(
        "the echo",
        async () => String((await call("surface.read", { surface_id: id })).text).includes("RESULTS-OK"),
      );
      const read = await call("surface.read", { surface_id: id, fenced: false });
      await call("surface.read", { surface_id: id, since: 0 });
      await call("surface.read", { surface_id: id, since: 0, fenced: false });
      await call("surface.screen", { surface_id: id });
      await call("surface.screen", { surface_id: id, since: read.output_generation });
      await call("surface.search", { surface_id: id, pattern: "RESULTS" });
      await call("surface.search", { surface_id: id, pattern: "RESULTS", fenced: false });
      await call("surface.rename", { surface_id: id, name: "results" });
      await call("surface.focus", { surface_id: id });
      const st = await call("surface.status", { surface_id: id });
      assert.equal(st.dialog_id, null, "a shell shows no dialog");
      // surface.answer's result is checked on real dialogs (tests/agents_answer_test.ts); here its refusal.
      const answer = await client.request("surface.answer", { surface_id: id, answer: "approve" });
      assert.equal((answer.error as { data?: { reason?: string } } | undefined)?.data?.reason, "no_dialog");
      checked.add("surface.answer");
      await call("surface.explain", { surface_id: id });
      await call("surface.clear", { surface_id: id });
      await call("fleet.list");
      await call("queue.info");
      await call("workspace.restore_layout", { layout: "even_v" });
      await call("workspace.select", { index: 0 });
      await call("surface.close", { surface_id: split.surface_id });

      await call("server.capabilities");
      await call("server.set_notifications", { enabled: true });
      const { session } = await call("session.create", {
        program: "/bin/sh",
        args: ["-c", "echo hello; cat"],
      });
      await call("session.list");
      await call("session.wait", {
        session,
        matcher: { type: "contains_text", value: "hello" },
        timeout_ms: 10_000,
      });
      await call("session.snapshot", { session });
      await call("session.transcript", { session });
      await call("session.input", { session, action: { type: "text", value: "typed\n" } });
      await call("session.resize", { session, rows: 30, cols: 90 });
      await call("session.kill", { session, signal: "TERM" });
      await call("session.close", { session });

      await call("workspace.close", { index: 0 });
      const up = await call("workspace.up", { name: "up", panes: [{ command: "/bin/sh", cwd: host.dir }] });
      assert.equal((up.panes as unknown[]).length, 1);
      const families = new Set([...checked].map((m) => m.split(".")[0]));
      for (const f of ["system", "workspace", "surface", "fleet", "queue", "server", "session"]) {
        assert.ok(families.has(f), `no method of ${f}.* was checked`);
      }
    } finally {
      client.close();
    }
  });
});

Deno.test("protocol: real events and notifications match their event schemas", async () => {
  await withHost({ config: `{ "host": { "heartbeat_secs": 1 } }` }, async (host) => {
    const stream = await Client.connect(host.socket);
    stream.timeoutMs = 0;
    const calls = await Client.connect(host.socket);
    const seen = new Set<string>();
    try {
      const ack = await stream.subscribe({});
      fits(results["events.subscribe"], ack.value, "events.subscribe");
      const ws = await calls.call("workspace.create", {
        name: "ev",
        command: "/bin/sh",
      });
      const id = ws.surface_id;
      await calls.call("surface.rename", { surface_id: id, name: "ev1" });
      // The ai.* family: a hook frame with the pane's token (as `paneflow ai-hook` posts it).
      await calls.call("surface.send_text", { surface_id: id, text: "echo TOKEN=$PANEFLOW_PANE_TOKEN.\r" });
      const token = await waitUntil("the pane's token", async () => {
        const r = await calls.call("surface.read", { surface_id: id, fenced: false });
        return /TOKEN=([^$\s]+)\./.exec(r.text)?.[1];
      });
      for (const method of ["ai.session_start", "ai.prompt_submit", "ai.stop"]) {
        const res = await calls.request(method, { surface_id: id, tool: "claude", token, prompt: "hi" });
        assert.equal(res.error, undefined, `${method}: ${JSON.stringify(res.error)}`);
        fits(results[method as keyof typeof results], res.result, method);
      }
      await calls.call("surface.send_text", { surface_id: id, text: "exit 3\r" });
      await waitUntil("the pane's exit", async () => {
        while (true) {
          const m = await stream.nextWithin(50);
          if (!m) break;
          const ev = m.value as { type: string };
          const schema = eventSchemas[ev.type as keyof typeof eventSchemas];
          assert.ok(schema, `no schema for event type ${ev.type}`);
          fits(schema, ev, `event ${ev.type}`);
          seen.add(ev.type);
        }
        return seen.has("surface_exited");
      });
      await calls.call("surface.close", { surface_id: id });
      await waitUntil("the close events", async () => {
        const m = await stream.nextWithin(200);
        if (m) {
          const ev = m.value as { type: string };
          fits(eventSchemas[ev.type as keyof typeof eventSchemas], ev, `event ${ev.type}`);
          seen.add(ev.type);
        }
        return seen.has("surface_closed") && seen.has("workspace_closed");
      });
      for (
        const t of [
          "workspace_created",
          "surface_created",
          "surface_changed",
          "surface_renamed",
          "ai.session_start",
          "ai.prompt_submit",
          "ai.stop",
          "agent_state",
        ]
      ) {
        assert.ok(seen.has(t), `saw ${t}`);
      }

      // ptywright's notifications, on a connection that turned them on.
      await calls.call("server.set_notifications", { enabled: true });
      const { session } = await calls.call("session.create", {
        program: "/bin/sh",
        args: ["-c", "echo note; sleep 0.2"],
      });
      const notes = new Set<string>();
      await waitUntil("session.exited", async () => {
        const m = await calls.nextWithin(200);
        if (m) {
          const n = m.value as { method: string; params: unknown };
          const schema = eventSchemas[n.method as keyof typeof eventSchemas];
          assert.ok(schema, `no schema for notification ${n.method}`);
          fits(schema, n.params, `notification ${n.method}`);
          notes.add(n.method);
        }
        return notes.has("session.exited");
      });
      assert.ok(notes.has("session.output"), "saw session.output");
      await calls.call("session.close", { session }).catch(() => {});
    } finally {
      stream.close();
      calls.close();
    }
  });
});

Deno.test("protocol: real replies of the adapter and plugin families match their result schemas", async () => {
  const plugins = `${ROOT}tests/fixtures/plugins`;
  const dir = await Deno.makeTempDir({ prefix: "pf-results-" });
  const child = spawnPaneflow(["serve", "--stdio", "--allow-plugin-load"], dir);
  const writer = child.stdin.getWriter();
  const stderr = child.stderr.pipeTo(new WritableStream());
  const c = new PwClient((b) => writer.write(b), child.stdout, "ndjson", async () => {
    await writer.close().catch(() => {});
  });
  const checked = new Set<string>();
  const call = async (method: string, params: unknown = {}) => {
    const m = await c.request(method, params);
    assert.equal(m.error, undefined, `${method}: ${JSON.stringify(m.error)}`);
    fits(results[method as keyof typeof results], m.result, method);
    checked.add(method);
    return m.result;
  };
  try {
    await call("plugin.capabilities");
    await call("plugin.validate_manifest", {
      manifest: { name: "m", kind: "adapter", version: "1", permissions: ["screen.read"] },
    });
    await call("plugin.load", { manifest_path: `${plugins}/echo/manifest.toml` });
    await call("plugin.describe", { plugin: "echo" });
    await call("plugin.describe", { plugin: "claude-code" });
    await call("adapter.list");
    const { adapter } = await call("adapter.start", {
      plugin: "echo",
      program: "/bin/sh",
      args: [`${plugins}/echo/echo_tui.sh`],
    });
    await call("adapter.live");
    await call("adapter.wait", { adapter, timeout_ms: 20_000 });
    await call("adapter.state", { adapter });
    await call("adapter.send", { adapter, intent: "send_prompt", params: { prompt: "hello" } });
    await call("adapter.wait", {
      adapter,
      intent: "wait_echo_matcher",
      params: { text: "hello" },
      timeout_ms: 20_000,
      wait_id: "w-1",
    });
    await call("adapter.turn", {
      adapter,
      send: { intent: "send_prompt", params: { prompt: "again" } },
      wait: { timeout_ms: 20_000 },
    });
    await call("adapter.cancel_wait", { wait_id: "w-none" });
    await call("adapter.snapshot", { adapter });
    await call("adapter.transcript", { adapter });
    await call("adapter.inspect", { adapter });
    // The adapter's pane, as `surface.list` shows it.
    const { surfaces } = await call("surface.list");
    assert.ok(
      surfaces.some((s: { adapter?: string }) => s.adapter === adapter),
      "the adapter's pane is listed",
    );
    const resumed = await call("adapter.resume", {
      plugin: "echo",
      program: "/bin/sh",
      args: [`${plugins}/echo/echo_tui.sh`],
      prior_adapter: adapter,
    });
    await call("adapter.close", { adapter: resumed.adapter });
    await call("plugin.unload", { plugin: "echo" });
    for (const f of ["adapter", "plugin"]) {
      const names = Object.keys(results).filter((m) => m.startsWith(`${f}.`));
      assert.deepEqual(names.filter((m) => !checked.has(m)), [], `${f}.* methods left unchecked`);
    }
  } finally {
    await c.end();
    await child.status;
    await stderr;
    await c.done();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
