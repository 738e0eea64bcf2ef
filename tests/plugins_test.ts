/**
 * Plugins and adapters over `paneflow serve --stdio` (`adapter.*`,
 * `plugin.*`; docs/plugins.md): a third-party Lua plugin for the echo TUI loaded with
 * plugin.load and driven through start/send/wait/turn/inspect/close,
 * permission gating, the sandbox and budgets, manifest checks, entrypoint
 * escapes, registry rules and wait cancellation across connections.
 */
import assert from "node:assert/strict";
import { ROOT } from "./_harness.ts";
import { connectSocket, type Msg, PwClient, spawnPaneflow } from "./_pw.ts";
import { waitUntil } from "./_harness.ts";

const PLUGINS = `${ROOT}tests/fixtures/plugins`;
const ECHO_TUI = `${PLUGINS}/echo/echo_tui.sh`;

/** `serve --stdio <args>` with a client on its stdio. */
async function serve(args: string[]) {
  const dir = await Deno.makeTempDir({ prefix: "pf-plugins-" });
  const child = spawnPaneflow(["serve", "--stdio", ...args], dir);
  const writer = child.stdin.getWriter();
  let stderr = "";
  const errDone = (async () => {
    for await (const c of child.stderr) stderr += new TextDecoder().decode(c);
  })();
  const client = new PwClient((b) => writer.write(b), child.stdout, "ndjson", async () => {
    try {
      await writer.close();
    } catch { /* closed */ }
  });
  return {
    client,
    dir,
    get stderr() {
      return stderr;
    },
    async stop() {
      await client.end();
      await child.status;
      await errDone;
      await client.done();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

function err(m: Msg) {
  assert.ok(m.error, `expected an error, got ${JSON.stringify(m.result)?.slice(0, 300)}`);
  return m.error!;
}

Deno.test("a Lua plugin loaded with plugin.load drives the echo TUI through the adapter surface", async () => {
  const s = await serve(["--allow-plugin-load"]);
  const c = s.client;
  try {
    assert.deepEqual(await c.call("plugin.load", { manifest_path: `${PLUGINS}/echo/manifest.toml` }), {
      plugin: "echo",
    });
    const names = (await c.call("adapter.list")).plugins.map((p: { name: string }) => p.name);
    assert.deepEqual(names, ["claude-code", "echo"]);
    const caps = await c.call("server.capabilities");
    assert.ok(caps.methods.includes("adapter.turn") && caps.methods.includes("plugin.unload"));

    // describe() is not exported: the host sorts the exports.
    const d = await c.call("plugin.describe", { plugin: "echo" });
    assert.deepEqual(d.wait_matchers.map((x: { name: string }) => x.name), [
      "wait_answer_matcher",
      "wait_echo_matcher",
      "wait_turn_matcher",
    ]);
    assert.ok(d.intents.some((x: { name: string }) => x.name === "send_prompt"));
    assert.ok(!d.intents.some((x: { name: string }) => x.name === "classify"));
    assert.deepEqual(d.states, []);

    const started = await c.call("adapter.start", { plugin: "echo", program: "/bin/sh", args: [ECHO_TUI] });
    assert.equal(started.adapter, "e1");
    assert.match(started.session, /^s\d+$/);
    assert.equal(started.plugin, "echo");

    // Wait for the prompt with the plugin's turn matcher.
    const ready = await c.call("adapter.wait", { adapter: "e1", timeout_ms: 20_000 });
    assert.equal(ready.state.state, "ready");
    assert.equal(ready.matched.kind, "all");
    assert.deepEqual(ready.matched.matched[1], { kind: "screen_stable", min_ms: 300 });

    // send + wait with a `lua` predicate matcher.
    const sent = await c.call("adapter.send", {
      adapter: "e1",
      intent: "send_prompt",
      params: { prompt: "hello" },
    });
    assert.equal(typeof sent.state.state, "string");
    const echoed = await c.call("adapter.wait", {
      adapter: "e1",
      intent: "wait_echo_matcher",
      params: { text: "hello" },
      timeout_ms: 20_000,
      wait_id: "w-echo",
    });
    assert.deepEqual(echoed.matched, {
      kind: "lua",
      plugin: "echo",
      predicate: "echoed",
      evidence: "echo of hello",
      capture: "hello",
    });
    assert.equal(echoed.wait_id, "w-echo");

    // An atomic turn.
    const turn = await c.call("adapter.turn", {
      adapter: "e1",
      send: { intent: "send_prompt", params: { prompt: "second line" } },
      wait: { timeout_ms: 20_000 },
    }).catch(async (e) => {
      const snap = await c.call("adapter.snapshot", { adapter: "e1" });
      throw new Error(`${e.message}; screen: ${JSON.stringify(snap.plain_text)}`);
    });
    const why = `turn: ${JSON.stringify(turn)}`;
    assert.equal(turn.state.state, "completed_turn", why);
    assert.equal(turn.state.metadata.last, "second line", why);
    assert.ok(turn.state.metadata.stable_ms >= 300, "stable_ms is passed to classify after a wait");

    // The adapter's pane is a pane like any other: `ls` shows it with its adapter state.
    const panes = (await c.call("surface.list")).surfaces;
    const pane = panes.find((p: { session?: string }) => p.session === started.session);
    assert.equal(pane.adapter, "e1");
    assert.equal(pane.adapter_plugin, "echo");
    assert.equal(pane.adapter_state, "completed_turn");

    const inspect = await c.call("adapter.inspect", { adapter: "e1" });
    assert.equal(inspect.adapter, "e1");
    assert.equal(inspect.plugin, "echo");
    assert.equal(inspect.session, started.session);
    assert.match(inspect.plain_text, /> second line/);
    assert.equal(typeof inspect.body_text, "string");
    assert.equal(typeof inspect.status_text, "string");
    assert.match(inspect.transcript_tail, /> hello/);

    const transcript = await c.call("adapter.transcript", { adapter: "e1", redact: false });
    assert.match(transcript.text, /> second line/);
    const snap = await c.call("adapter.snapshot", { adapter: "e1" });
    assert.match(snap.plain_text, /READY>/);

    // Adapter sessions are not in session.list (ptywright lists only session.create's).
    assert.ok(!(await c.call("session.list")).sessions.includes(started.session));
    const live = await c.call("adapter.live");
    assert.deepEqual(live.adapters.map((a: { adapter: string }) => a.adapter), ["e1"]);

    // A loaded plugin with live adapters cannot be unloaded.
    assert.match(err(await c.request("plugin.unload", { plugin: "echo" })).message, /has live adapters/);

    // The blank line ends the TUI: the answer marker, then the process exit.
    await c.call("adapter.send", { adapter: "e1", intent: "finish" });
    const fin = await c.call("adapter.wait", {
      adapter: "e1",
      intent: "wait_answer_matcher",
      timeout_ms: 20_000,
    });
    assert.equal(fin.state.state, "finished");

    assert.deepEqual(await c.call("adapter.close", { adapter: "e1" }), { closed: true });
    const gone = err(await c.request("adapter.state", { adapter: "e1" }));
    assert.equal(gone.code, -32602);
    assert.equal(gone.message, "unknown adapter: e1");
    assert.deepEqual(await c.call("plugin.unload", { plugin: "echo" }), { unloaded: true });
    assert.deepEqual((await c.call("adapter.list")).plugins.map((p: { name: string }) => p.name), [
      "claude-code",
    ]);
  } finally {
    await s.stop();
  }
});

Deno.test("permissions: a manifest without input.write gets -32004 on adapter.send; host helpers follow permissions", async () => {
  const s = await serve(["--plugin", `${PLUGINS}/readonly/manifest.json`]);
  const c = s.client;
  try {
    const started = await c.call("adapter.start", { plugin: "readonly" });
    assert.deepEqual(started.state.metadata, { has_action: false, has_matcher: false });
    const e = err(await c.request("adapter.send", { adapter: started.adapter, intent: "send_prompt" }));
    assert.equal(e.code, -32004);
    assert.equal(e.message, "method `adapter.send` requires permission `input.write`");
    assert.deepEqual(e.data, { method: "adapter.send", required_permission: "input.write" });
    const t = err(
      await c.request("adapter.turn", { adapter: started.adapter, send: { intent: "send_prompt" } }),
    );
    assert.deepEqual(t.data, { method: "adapter.send", required_permission: "input.write" });
    const w = err(await c.request("adapter.wait", { adapter: started.adapter }));
    assert.deepEqual(w.data, { method: "adapter.wait", required_permission: "matcher.wait" });
    const tr = err(await c.request("adapter.transcript", { adapter: started.adapter }));
    assert.deepEqual(tr.data, { method: "adapter.transcript", required_permission: "transcript.read" });
    assert.deepEqual(await c.call("adapter.close", { adapter: started.adapter }), { closed: true });

    // plugin.load without --allow-plugin-load.
    const denied = err(await c.request("plugin.load", { manifest_path: `${PLUGINS}/echo/manifest.toml` }));
    assert.equal(denied.code, -32004);
    assert.deepEqual(denied.data, { method: "plugin.load", reason: "server_did_not_grant_plugin_load" });
    const denied2 = err(await c.request("plugin.unload", { plugin: "readonly" }));
    assert.equal((denied2.data as { reason: string }).reason, "server_did_not_grant_plugin_load");
  } finally {
    await s.stop();
  }
});

Deno.test("sandbox: a runaway loop hits the instruction limit and the host keeps answering; os/io/bytecode are out of reach", async () => {
  const s = await serve(["--plugin", `${PLUGINS}/echo/manifest.toml`]);
  const c = s.client;
  try {
    const { adapter } = await c.call("adapter.start", {
      plugin: "echo",
      program: "/bin/sh",
      args: [ECHO_TUI],
    });
    const t0 = performance.now();
    const spin = err(await c.request("adapter.send", { adapter, intent: "spin" }));
    assert.equal(spin.code, -32603);
    assert.equal(spin.message, "lua plugin `echo` failed: Lua plugin instruction limit exceeded");
    assert.ok(performance.now() - t0 < 5000, "the budget stops the loop well before the wall limit");
    // The host and the adapter still answer.
    assert.equal((await c.call("adapter.state", { adapter })).state.sequence >= 0, true);
    assert.ok(Array.isArray((await c.call("session.list")).sessions));

    const os = err(await c.request("adapter.send", { adapter, intent: "escape_os" }));
    assert.match(os.message, /attempt to index a nil value \(global 'os'\)/);
    const io = err(await c.request("adapter.send", { adapter, intent: "escape_io" }));
    assert.match(io.message, /attempt to index a nil value \(global 'io'\)/);
    const ld = err(await c.request("adapter.send", { adapter, intent: "escape_load" }));
    assert.match(ld.message, /attempt to call a nil value \(field 'dump'\)/);
    assert.equal(await Deno.stat("/tmp/pf-plugin-pwned").catch(() => null), null);
    const missing = err(await c.request("adapter.send", { adapter, intent: "nope" }));
    assert.equal(missing.code, -32603);
    await c.call("adapter.close", { adapter });

    // The `lua` matcher in session.wait: the predicate runs in the plugin registry.
    const { session } = await c.call("session.create", { program: "/bin/sh", args: [ECHO_TUI] });
    await c.call("session.input", { session, action: { type: "text", value: "hi there\r" } });
    const waited = await c.call("session.wait", {
      session,
      matcher: {
        type: "all",
        value: [
          { type: "lua", value: { plugin: "echo", predicate: "echoed", params: { text: "hi there" } } },
          { type: "contains_text", value: "READY>" },
        ],
      },
      timeout_ms: 20_000,
    });
    assert.equal(waited.matched, true);
    assert.match(waited.snapshot.plain_text, /> hi there/);
    assert.equal(typeof waited.elapsed_ms, "number");
    const unknownPlugin = err(
      await c.request("session.wait", {
        session,
        matcher: { type: "lua", value: { plugin: "nope", predicate: "x" } },
        timeout_ms: 100,
      }),
    );
    assert.deepEqual([unknownPlugin.code, unknownPlugin.message], [-32602, "unknown plugin: nope"]);
    let deep: unknown = { type: "lua", value: { plugin: "echo", predicate: "echoed" } };
    for (let i = 0; i < 10_000; i++) deep = { type: "any", value: [deep] };
    const tooDeep = err(await c.request("session.wait", { session, matcher: deep, timeout_ms: 100 }));
    assert.equal(tooDeep.code, -32602);
    assert.match(tooDeep.message, /nested more than 64 levels/);
    const never = err(
      await c.request("session.wait", {
        session,
        matcher: { type: "lua", value: { plugin: "echo", predicate: "echoed", params: { text: "never" } } },
        timeout_ms: 300,
      }),
    );
    assert.equal(never.code, -32001);
  } finally {
    await s.stop();
  }
});

Deno.test("manifests: validation order and messages; entrypoint escapes refused; registry rules", async () => {
  const s = await serve(["--allow-plugin-load", "--plugin", `${PLUGINS}/echo/manifest.toml`]);
  const c = s.client;
  try {
    const v = (manifest: unknown) => c.request("plugin.validate_manifest", { manifest });
    assert.deepEqual(
      (await v({
        name: "demo",
        kind: "adapter",
        version: "0.1.0",
        permissions: ["session.spawn", "screen.read"],
      }))
        .result,
      { valid: true },
    );
    const cases: [unknown, string][] = [
      [{ name: " ", kind: "adapter", version: "" }, "plugin name must not be empty"],
      [{ name: "x", kind: "adapter", version: " " }, "plugin version must not be empty"],
      [{ name: "x", kind: "adapter", version: "1", runtime: "lua" }, "plugin runtime requires an entrypoint"],
      [
        { name: "x", kind: "adapter", version: "1", entrypoint: "m.lua" },
        "plugin entrypoint requires a runtime",
      ],
      [
        { name: "x", kind: "adapter", version: "1", permissions: ["input.write", "input.write"] },
        "duplicate plugin permission: InputWrite",
      ],
    ];
    for (const [m, message] of cases) {
      const e = err(await v(m));
      assert.equal(e.code, -32602);
      assert.equal(e.message, message);
    }
    assert.equal(
      err(await v({ name: "x", kind: "adapter", version: "1", permissions: ["fs.write"] })).code,
      -32602,
    );

    for (
      const [file, why] of [
        ["manifest.toml", "must be a relative path inside the manifest's directory"],
        ["abs.toml", "must be a relative path inside the manifest's directory"],
        ["link.toml", "escapes the manifest's directory"],
      ]
    ) {
      const e = err(await c.request("plugin.load", { manifest_path: `${PLUGINS}/escape/${file}` }));
      assert.equal(e.code, -32603);
      assert.ok(e.message.includes(why), e.message);
    }
    const dup = err(await c.request("plugin.load", { manifest_path: `${PLUGINS}/echo/manifest.toml` }));
    assert.equal(dup.message, "plugin `echo` is already registered");
    const unknown = err(await c.request("plugin.unload", { plugin: "nope" }));
    assert.deepEqual([unknown.code, unknown.message], [-32602, "unknown plugin: nope"]);
    const builtin = err(await c.request("plugin.unload", { plugin: "claude-code" }));
    assert.deepEqual([builtin.code, builtin.message], [
      -32602,
      "plugin `claude-code` is built in and cannot be unloaded",
    ]);
    const start = err(await c.request("adapter.start", { plugin: "does-not-exist" }));
    assert.deepEqual([start.code, start.message], [-32602, "unknown plugin: does-not-exist"]);

    const caps = await c.call("plugin.capabilities");
    assert.equal(caps.embedded_lua, true);
    assert.equal(caps.wasm, false);
    assert.deepEqual(caps.permissions, [
      "session.spawn",
      "session.kill",
      "session.resize",
      "screen.read",
      "transcript.read",
      "input.write",
      "matcher.wait",
    ]);
    assert.deepEqual(caps.builtin_plugins.map((m: { name: string }) => m.name), ["claude-code"]);
    assert.equal(caps.builtin_plugins[0].default_target.program, "claude");

    const cd = await c.call("plugin.describe", { plugin: "claude-code" });
    assert.equal(cd.intents.length, 16);
    assert.deepEqual(cd.wait_matchers.map((m: { name: string }) => m.name), [
      "wait_turn_matcher",
      "wait_cancel_settled_matcher",
    ]);
    assert.equal(cd.states.length, 16);
    assert.equal(err(await c.request("plugin.describe", { plugin: "x" })).message, "unknown plugin: x");

    for (
      const m of [
        "adapter.state",
        "adapter.snapshot",
        "adapter.transcript",
        "adapter.inspect",
        "adapter.close",
      ]
    ) {
      assert.equal(err(await c.request(m, { adapter: "e9" })).code, -32602, m);
    }
    assert.equal(err(await c.request("adapter.send", { adapter: "e9", intent: "x" })).code, -32602);
    assert.equal(err(await c.request("adapter.wait", { adapter: "e9" })).code, -32602);
    assert.deepEqual(await c.call("adapter.cancel_wait", { wait_id: "never" }), { cancelled: false });
  } finally {
    await s.stop();
  }
});

Deno.test("a wait cancelled by wait_id from another connection fails with -32005; env merging, resume, timeouts", async () => {
  const s = await serve(["--plugin", `${PLUGINS}/echo/manifest.toml`]);
  const c = s.client;
  try {
    const a = await c.call("adapter.start", {
      plugin: "echo",
      program: "/bin/sh",
      args: ["-lc", 'printf "V=$PF_V\\n"; cat'],
      env: { PF_V: "caller" },
      rows: 10,
      cols: 50,
    });
    const snap = await c.call("adapter.snapshot", { adapter: a.adapter });
    assert.deepEqual([snap.size.rows, snap.size.cols], [10, 50]);
    await waitUntil(
      "the caller's env in the program's output",
      async () => /V=caller/.test((await c.call("adapter.transcript", { adapter: a.adapter })).text),
    );
    // The wait never matches (no READY> prompt); a second connection on the host's socket cancels it.
    const { socket } = await c.call("system.identify");
    const other = await connectSocket(socket);
    try {
      // The wait id is bound before the adapter's mutex: a duplicate is refused at once. The probe
      // from the other connection may itself win the race for "w-1" (for its 100 ms); the real
      // wait is then refused as the duplicate and is simply sent again.
      const start = () => {
        const p = c.request(
          "adapter.wait",
          { adapter: a.adapter, timeout_ms: 60_000, wait_id: "w-1" },
          60_000,
        );
        const state = { settled: false };
        p.then(() => (state.settled = true), () => (state.settled = true));
        return { p, state };
      };
      let waiting = start();
      await waitUntil("the first wait is in flight", async () => {
        if (waiting.state.settled) waiting = start();
        const dup: Msg = await other.client.request("adapter.wait", {
          adapter: a.adapter,
          timeout_ms: 100,
          wait_id: "w-1",
        });
        return dup.error?.message === "wait_id `w-1` is already in flight" && !waiting.state.settled;
      });
      const t0 = performance.now();
      const cancelled = await other.client.call("adapter.cancel_wait", { wait_id: "w-1" });
      assert.deepEqual(cancelled, { cancelled: true, adapter: a.adapter, wait_id: "w-1" });
      const w = err(await waiting.p);
      assert.deepEqual([w.code, w.message], [-32005, "wait cancelled"]);
      assert.ok(performance.now() - t0 < 2000);
      assert.deepEqual(await other.client.call("adapter.cancel_wait", { wait_id: "w-1" }), {
        cancelled: false,
      });
    } finally {
      await other.client.end();
      other.conn.close();
    }

    const t = err(await c.request("adapter.wait", { adapter: a.adapter, timeout_ms: 200 }));
    assert.deepEqual([t.code, t.message], [-32001, "timed out waiting for matcher"]);

    const r = await c.call("adapter.resume", {
      plugin: "echo",
      prior_adapter: a.adapter,
      program: "/bin/sh",
      args: ["-lc", "cat"],
    });
    assert.notEqual(r.adapter, a.adapter);
    assert.equal(err(await c.request("adapter.state", { adapter: a.adapter })).code, -32602);
    await c.call("adapter.close", { adapter: r.adapter });
  } finally {
    await s.stop();
  }
});
