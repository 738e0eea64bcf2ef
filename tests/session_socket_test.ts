/**
 * ptywright's protocol on `paneflow serve --socket PATH`: two clients share
 * one session registry, each with its own notification state; a quiet
 * ptywright client outlives the idle deadline; sessions are panes (`ls
 * --all`, `read`, `search`), other panes are not sessions; SIGTERM unlinks
 * the socket.
 */
import assert from "node:assert/strict";
import { connectSocket, FIXTURES, hostEnv, spawnPaneflow } from "./_pw.ts";
import { ROOT, runCommand, waitUntil } from "./_harness.ts";

async function cli(dir: string, socket: string, args: string[]) {
  return await runCommand(Deno.execPath(), [
    "run",
    "-A",
    "--quiet",
    `--config=${ROOT}deno.json`,
    `${ROOT}main.ts`,
    ...args,
  ], { env: { ...hostEnv(dir), PANEFLOW_SOCKET_PATH: socket } });
}

Deno.test("serve --socket: two clients, one registry, per-connection notifications, no idle drop, panes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pw-sock-" });
  await Deno.writeTextFile(`${dir}/config.jsonc`, `{ "host": { "idle_timeout_secs": 3 } }`);
  const socket = `${dir}/pw.sock`;
  const host = spawnPaneflow(["serve", "--socket", socket], dir);
  host.stdout.cancel();
  const errs = (async () => {
    let s = "";
    for await (const c of host.stderr) s += new TextDecoder().decode(c);
    return s;
  })();
  const conns: Deno.UnixConn[] = [];
  try {
    await waitUntil("the socket", () => Deno.stat(socket).then(() => true, () => false), {
      timeoutMs: 30000,
    });
    // One call of the family exempts a connection from the idle deadline (3 s in this test).
    const a = await connectSocket(socket);
    conns.push(a.conn);
    assert.deepEqual(await a.client.call("session.list"), { sessions: [] });
    const b = await connectSocket(socket);
    conns.push(b.conn);
    assert.deepEqual(await b.client.call("session.list"), { sessions: [] });
    assert.deepEqual(await a.client.call("server.set_notifications", { enabled: true }), { enabled: true });
    const { session } = await a.client.call("session.create", { program: `${FIXTURES}/echo_tui.sh` });
    // The other connection sees the same registry and drives the session.
    assert.deepEqual(await b.client.call("session.list"), { sessions: [session] });
    await b.client.call("session.wait", { session, matcher: { type: "contains_text", value: "READY>" } });
    await b.client.call("session.input", { session, action: { type: "text", value: "from-b\r" } });
    const w = await a.client.call("session.wait", {
      session,
      matcher: { type: "contains_text", value: "> from-b" },
    });
    assert.ok(w.snapshot.plain_text.includes("> from-b"));
    // Notifications are per connection: a subscribed, b not.
    await a.client.next((m) => m.method === "session.output" && String(m.params?.output).includes("from-b"));
    assert.equal(b.client.messages.filter((m) => m.method).length, 0);

    // A quiet ptywright client is not dropped by the (3 s here) idle deadline...
    await new Promise((r) => setTimeout(r, 6500));
    assert.deepEqual(await b.client.call("session.list"), { sessions: [session] });
    // ...while a connection that never spoke the protocol is.
    const idle = await connectSocket(socket);
    conns.push(idle.conn);
    await Promise.race([
      idle.client.done(),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error("idle connection was not dropped")), 20000)
      ),
    ]);

    // Sessions are panes: ls --all shows the session id; read and search work by its name.
    const ls = await cli(dir, socket, ["ls", "--all", "--json"]);
    assert.equal(ls.code, 0, ls.stderr);
    const panes = JSON.parse(ls.stdout).surfaces as { surface_id: number; session?: string; name: string }[];
    const pane = panes.find((p) => p.session === session);
    assert.ok(pane, ls.stdout);
    assert.equal(pane.name, session);
    const read = await cli(dir, socket, ["read", session]);
    assert.equal(read.code, 0, read.stderr);
    assert.ok(read.stdout.includes("> from-b"), read.stdout);
    const search = await cli(dir, socket, ["search", session, "from-b"]);
    assert.equal(search.code, 0, search.stderr);
    assert.ok(search.stdout.includes("from-b"));
    // A pane made by another verb is not a session: session.* cannot reach it.
    const other = await a.client.call("workspace.create", { command: "sleep 30" });
    const denied = await a.client.request("session.input", {
      session: String(other.surface_id),
      action: { type: "text", value: "x" },
    });
    assert.equal(denied.error?.code, -32602);
    assert.deepEqual((await a.client.call("session.list")).sessions, [session]);
    // A wait on one connection ends with -32002 when another connection closes the session.
    const pending = b.client.request("session.wait", {
      session,
      matcher: { type: "contains_text", value: "never printed" },
      timeout_ms: 20000,
    });
    await a.client.call("session.list");
    const t0 = Date.now();
    // Closing the session closes its pane.
    await a.client.call("session.close", { session });
    // (-32602 if the close won the race and the wait never started.)
    const ended = (await pending).error;
    assert.ok(
      ended?.code === -32002 && ended.message === "session is closed" ||
        ended?.code === -32602 && ended.message === `unknown session: ${session}`,
      JSON.stringify(ended),
    );
    assert.ok(Date.now() - t0 < 5000);
    const after = JSON.parse((await cli(dir, socket, ["ls", "--all", "--json"])).stdout).surfaces;
    assert.ok(!after.some((p: { session?: string }) => p.session === session));
  } finally {
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    host.kill("SIGTERM");
    await host.status;
    await errs;
    assert.equal(await Deno.stat(socket).then(() => true, () => false), false, "SIGTERM unlinks the socket");
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("serve: --stdio and --socket together is a usage error", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await cli(dir, `${dir}/x.sock`, ["serve", "--stdio", "--socket", `${dir}/x.sock`]);
    assert.equal(r.code, 2);
    assert.ok(
      r.stderr.includes("serve accepts only one transport: use either --stdio or --socket"),
      r.stderr,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
