/**
 * Deadlines: no verb hangs on a listener that accepts and never answers.
 */
import assert from "node:assert/strict";
import { runCli } from "./_harness.ts";

/** A unix listener that accepts every connection and never writes a byte. */
function silentListener(): { path: string; close: () => void; accepted: () => number } {
  const dir = Deno.makeTempDirSync({ prefix: "pf-silent-" });
  const path = `${dir}/silent.sock`;
  const listener = Deno.listen({ transport: "unix", path });
  const conns: Deno.Conn[] = [];
  (async () => {
    try {
      for await (const c of listener) conns.push(c);
    } catch { /* closed */ }
  })();
  return {
    path,
    accepted: () => conns.length,
    close: () => {
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      listener.close();
      Deno.removeSync(dir, { recursive: true });
    },
  };
}

Deno.test("deadlines: every verb gives up on a silent listener with one line", async (t) => {
  const silent = silentListener();
  try {
    // Start-up of `deno run` is not the verb's; the deadline itself is the part under test.
    const env = { PANEFLOW_SOCKET_PATH: silent.path, PANEFLOW_TIMEOUT: "1", NO_COLOR: "1" };
    for (
      const args of [
        ["ls"],
        ["read", "1"],
        ["status", "1"],
        ["new", "--no-autostart"],
        ["up", "--no-autostart", "tests/fixtures/workspace/valid/minimal.toml"],
        ["wait", "--match", "1", "--idle", "--timeout", "60"],
        ["send", "1", "hi"],
      ]
    ) {
      await t.step(args.join(" "), async () => {
        const started = Date.now();
        const r = await runCli(args, env);
        const took = Date.now() - started;
        const lines = r.stderr.trim().split("\n");
        assert.notEqual(r.code, 0, r.stderr);
        assert.equal(lines.length, 1, `one line, got: ${r.stderr}`);
        assert.match(lines[0], /within 1 s|took over 1 s|PANEFLOW_TIMEOUT/, r.stderr);
        assert.ok(!/\bat .*\.ts:\d+/.test(r.stderr), "no stack trace");
        // 1 s deadline (twice at most: a ping, then the call) plus process start-up under load.
        assert.ok(took < 20_000, `took ${took} ms`);
      });
    }
    await t.step("the default deadline is 5 s", async () => {
      const started = Date.now();
      const r = await runCli(["ls"], { PANEFLOW_SOCKET_PATH: silent.path });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /within 5 s/);
      assert.ok(Date.now() - started >= 5000);
    });
    await t.step("a bad PANEFLOW_TIMEOUT is a usage error", async () => {
      const r = await runCli(["ls"], { PANEFLOW_SOCKET_PATH: silent.path, PANEFLOW_TIMEOUT: "soon" });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /PANEFLOW_TIMEOUT must be a positive number/);
    });
  } finally {
    silent.close();
  }
});
