/**
 * Hardening (docs/hardening.md): connection budgets, who holds the slots, stalled
 * event readers shed, `wait` on one connection, `system.stats`.
 */
import assert from "node:assert/strict";
import { waitUntil, withHost } from "./_harness.ts";
import { type EventStream, RpcConn, spawnCli, subscribe } from "./_stream.ts";
import { DEFAULT_PANE_WORKERS } from "../src/spec/config.ts";

Deno.test("hardening: event streams do not take the calls' slots; a full host says who holds them", async () => {
  await withHost({}, async (host) => {
    // 20 watchers (MCP bridges, `watch`): more than the 16 call slots.
    const streams: EventStream[] = [];
    const callers: RpcConn[] = [];
    try {
      for (let i = 0; i < 20; i++) streams.push(await subscribe(host.socket));
      const ls = await host.cli(["ls"]);
      assert.equal(ls.code, 0, `the CLI still works beside 20 event streams: ${ls.stderr}`);

      // 16 callers that said who they are hold every call slot.
      for (let i = 0; i < 16; i++) {
        const c = await RpcConn.open(host.socket);
        await c.call("system.ping");
        callers.push(c);
      }
      const full = await host.cli(["ls"]);
      assert.equal(full.code, 1);
      assert.match(full.stderr, /Too many connections/);
      assert.match(full.stderr, new RegExp(`held by pid ${Deno.pid} paneflow`), full.stderr);
      assert.match(full.stderr, /paneflow clients/);
      assert.equal(full.stderr.trim().split("\n").length, 1);

      callers.pop()!.close();
      const list = await waitUntil("a free slot", async () => {
        const r = await host.cli(["clients", "--json"]);
        return r.code === 0
          ? JSON.parse(r.stdout) as { clients: { stream: boolean; verb: string | null; self: boolean }[] }
          : null;
      });
      assert.equal(list.clients.filter((c) => c.stream).length, 20);
      assert.equal(list.clients.filter((c) => !c.stream).length, 16);
      assert.equal(list.clients.find((c) => c.self)?.verb, "clients");
    } finally {
      for (const c of callers) c.close();
      for (const s of streams) await s.close();
    }
  });
});

Deno.test("hardening: a watcher that stops reading is shed by the write deadline", async () => {
  await withHost({ config: '{"host": {"idle_timeout_secs": 0.5}}' }, async (host) => {
    const stalled = await subscribe(host.socket, { paused: true });
    // A watcher of the same events that keeps reading: it must not be shed with the stalled one.
    const live = await subscribe(host.socket);
    try {
      // Events pile up: output changes and workspace churn far beyond a socket buffer.
      const busy = await host.json<{ surface_id: number }>(["new", "-c", "while :; do seq 1 200; done"]);
      await waitUntil("the stalled stream to be closed", async () => {
        const stats = await host.call("system.stats");
        return stats.connections.streams === 1;
      }, { timeoutMs: 20_000 });
      // The one left is the live watcher: still open, it saw the flood, and it hears what comes next.
      assert.equal(live.ended, false, "the live watcher was not shed");
      assert.ok(live.of("surface_changed", busy.surface_id).length > 0, "the live watcher saw the output");
      const next = await host.json<{ surface_id: number }>(["new", "-c", "exec sleep 300"]);
      await live.waitFor(
        "the live watcher to hear of the pane made after the shed",
        (f) => f.type === "surface_created" && f.surface_id === next.surface_id,
      );
      // A watcher that connects now works too.
      const late = await subscribe(host.socket);
      await late.close();
    } finally {
      await live.close();
      await stalled.close();
    }
  });
});

Deno.test("hardening: a line over 1 MiB on the socket closes that connection only; the host serves the others", async () => {
  await withHost({}, async (host) => {
    const pane = await host.json<{ surface_id: number }>(["new", "-c", "exec sleep 300"]);
    const other = await RpcConn.open(host.socket);
    const watcher = await subscribe(host.socket);
    try {
      await other.call("system.ping");
      const conn = await Deno.connect({ transport: "unix", path: host.socket });
      const big = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "system.ping",
        params: { pad: "x".repeat(1 << 20) },
      });
      const ping = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "system.ping" });
      const received = (async () => {
        // Everything the host writes until it closes the connection (or a deadline closes it here).
        const timer = setTimeout(() => conn.close(), 10_000);
        let text = "";
        let closedByHost = false;
        try {
          for await (const chunk of conn.readable) text += new TextDecoder().decode(chunk, { stream: true });
          closedByHost = true;
        } catch { /* closed here: the deadline */ }
        clearTimeout(timer);
        return { lines: text.split("\n").filter((l) => l), closedByHost };
      })();
      const w = conn.writable.getWriter();
      await w.write(new TextEncoder().encode(`${big}\n${ping}\n`)).catch(() => {});
      const { lines, closedByHost } = await received;
      assert.ok(closedByHost, "the host closed the connection");
      assert.equal(
        lines.length,
        1,
        `only the error, not the ping after it: ${lines.map((l) => l.slice(0, 80))}`,
      );
      const err = JSON.parse(lines[0]);
      assert.equal(err.error.code, -32600);
      assert.match(err.error.message, /exceeds 1048576 bytes; connection closed/);
      // The rest of the host goes on: a connection opened before, a new one, the watcher, the pane.
      assert.equal((await other.call("system.ping")).pong, true);
      assert.equal((await host.call("system.ping")).pong, true);
      const next = await host.json<{ surface_id: number }>(["new", "-c", "exec sleep 300"]);
      await watcher.waitFor(
        "the watcher to hear of a new pane",
        (f) => f.type === "surface_created" && f.surface_id === next.surface_id,
      );
      const { surfaces } = await host.call(
        "surface.list",
      );
      assert.equal(surfaces.find((s) => s.surface_id === pane.surface_id)?.exited, false);
    } finally {
      other.close();
      await watcher.close();
    }
  });
});

Deno.test("hardening: wait holds one connection, and an idle stream is not dropped by the read deadline", async () => {
  await withHost({ config: '{"host": {"idle_timeout_secs": 0.5}}' }, async (host) => {
    await host.json(["new", "--pane-name", "w", "-c", "exec sleep 300"]);
    const wait = spawnCli(["wait", "--match", "w", "--pattern", "NEVER", "--timeout", "30"], host.env);
    try {
      const mine = await waitUntil("the wait to connect", async () => {
        const { clients } = await host.call(
          "system.clients",
        );
        const waits = clients.filter((c) => c.verb === "wait");
        return waits.length && waits.every((c) => c.stream) ? waits : null;
      });
      assert.equal(mine.length, 1, "one connection");
      // Past several idle read deadlines the wait is still there.
      await new Promise((r) => setTimeout(r, 2000));
      assert.equal(wait.done(), false, wait.stderr());
      await host.cli(["send", "w", "x"]); // a call on the same connection after subscribing still works
      const { clients } = await host.call("system.clients");
      assert.equal(clients.filter((c) => c.verb === "wait").length, 1);
    } finally {
      wait.kill();
      await wait.status;
    }
  });
});

Deno.test("hardening: system.stats reports memory, fds, workers, the bus and connections", async () => {
  await withHost({}, async (host) => {
    await host.json(["new", "-c", "exec sleep 300"]);
    const s = await subscribe(host.socket);
    try {
      const st = await host.call("system.stats");
      assert.ok(st.rss > 1 << 20, `rss ${st.rss}`);
      assert.ok(st.fds !== null && st.fds > 3, `fds ${st.fds}`);
      assert.equal(st.workers.length, DEFAULT_PANE_WORKERS);
      assert.ok(st.workers.every((w) => w.heap_used > 0));
      assert.equal(st.workers.reduce((a, w) => a + w.panes, 0), 1);
      assert.ok(st.bus && st.bus.subscribers >= 1);
      assert.equal(typeof st.bus.max_queue, "number");
      assert.equal(st.connections.streams, 1);
      assert.ok(st.connections.calls !== null && st.connections.calls >= 1);
      assert.equal(st.panes, 1);
    } finally {
      await s.close();
    }
  });
});

Deno.test("hardening: watching one pane's output makes only its worker rest; watching all, every worker", async () => {
  await withHost({}, async (host) => {
    const a = (await host.json<{ surface_id: number }>(["new", "-c", "exec sleep 300"])).surface_id;
    await host.json(["new", "-c", "exec sleep 300"]); // the other worker's
    const watched = async () =>
      (await host.call("system.stats")).workers
        .filter((w) => w.watched).length;
    assert.equal(await watched(), 0);
    const one = await subscribe(host.socket, { surfaces: [a], types: ["surface_changed"] });
    await waitUntil("one worker watched", async () => await watched() === 1);
    const all = await subscribe(host.socket, { types: ["surface_changed"] });
    await waitUntil("every worker watched", async () => await watched() === DEFAULT_PANE_WORKERS);
    await all.close();
    await waitUntil("one worker watched again", async () => await watched() === 1);
    await one.close();
    await waitUntil("no worker watched", async () => await watched() === 0);
  });
});

Deno.test("hardening: after a flood a pane worker hands freed memory back", async () => {
  await withHost({}, async (host) => {
    // ~6.9 MB of output: more than the 4 MiB after which a worker trims (src/core/pane/release.ts).
    const { surface_id } = await host.json<{ surface_id: number }>([
      "new",
      "-c",
      "seq 1 1000000; exec sleep 300",
    ]);
    const st = await waitUntil("a worker to trim", async () => {
      const s = await host.call("system.stats");
      return s.workers.some((w) => w.trims > 0) ? s : null;
    }, { timeoutMs: 30_000 });
    assert.ok(st.workers.every((w) => w.trim_ms >= 0));
    // The pane gets all of its output, trims or not (on a loaded machine a trim may come before
    // `seq` has finished: a worker that never goes quiet trims within 2 s).
    const read = await waitUntil("the pane's last line", async () => {
      const r = await host.call("surface.read", { surface_id, lines: 2, fenced: false });
      return r.text.includes("1000000") ? r : null;
    }, { timeoutMs: 30_000 });
    assert.match(read.text, /999999\n1000000/);
  });
});

Deno.test("hardening: workspace.create and surface.split type their prompt, as workspace.up does", async () => {
  await withHost({}, async (host) => {
    const ws = await host.call("workspace.create", {
      command: "echo ready; exec cat",
      prompt: "create-prompt-text",
      cwd: host.dir,
    });
    const split = await host.call("surface.split", {
      direction: "h",
      surface_id: ws.surface_id,
      command: "echo ready; exec cat",
      prompt: "split-prompt-text",
      cwd: host.dir,
    });
    const count = async (id: number, text: string) =>
      (await host.call("surface.read", { surface_id: id, fenced: false })).text.split(text)
        .length - 1;
    for (
      const [id, text] of [[ws.surface_id, "create-prompt-text"], [
        split.surface_id,
        "split-prompt-text",
      ]] as const
    ) {
      // The terminal echoes the typed prompt once; nothing pokes the pane meanwhile, so the
      // prefill sees its output settle.
      await waitUntil(`pane ${id} to get its prompt`, async () => (await count(id, text)) === 1, {
        timeoutMs: 20_000,
      });
      // Typed, not submitted: only Enter makes cat print the line it was typed into.
      assert.equal(await count(id, text), 1);
      await host.call("surface.send_text", { surface_id: id, text: "\r" });
      await waitUntil(`cat to print pane ${id}'s prompt`, async () => (await count(id, text)) === 2);
    }
  });
});
