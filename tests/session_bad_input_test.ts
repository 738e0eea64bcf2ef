/**
 * Bad input to ptywright's family: each a clear error, the host unharmed.
 * Unknown sessions, wrong action types, huge values, negative sizes, a
 * matcher tree 10,000 levels deep, regexes that would backtrack
 * catastrophically, 1 MiB output lines and a request line over the cap (on
 * the default host socket).
 */
import assert from "node:assert/strict";
import { startStdio } from "./_pw.ts";
import { rawExchange, startHost } from "./_harness.ts";

Deno.test("bad params: unknown session, wrong actions, huge values, negative sizes, deep trees", async () => {
  const h = await startStdio();
  try {
    const c = h.client;
    const err = async (method: string, params: unknown) => (await c.request(method, params)).error!;
    assert.deepEqual(await err("session.snapshot", { session: "s99" }), {
      code: -32602,
      message: "unknown session: s99",
    });
    assert.deepEqual(await err("session.wait", { session: "s99", matcher: { type: "process_exited" } }), {
      code: -32602,
      message: "unknown session: s99",
    });
    const { session } = await c.call("session.create", { program: "/bin/cat" });
    const bad = [
      [{ type: "text", value: 5 }, /`action.value`/],
      [{ type: "bogus" }, /unknown variant/],
      [{ type: "key", value: "hyperspace" }, /unknown key `hyperspace`; expected one of enter/],
      [{ type: "resize", value: { rows: 10, cols: 10 } }, /missing field `action.value.pixel_width`/],
      [{ type: "signal", value: "stop" }, /unknown signal `stop`/],
      [{ type: "text", value: "x".repeat(600 * 1024) }, /action value is 614400 bytes; the limit is 524288/],
      ["text", /`action`/],
    ] as const;
    for (const [action, re] of bad) {
      const e = await err("session.input", { session, action });
      assert.equal(e.code, -32602, JSON.stringify(action).slice(0, 80));
      assert.match(e.message, re);
    }
    for (
      const p of [
        { program: "/bin/cat", rows: -1 },
        { program: "/bin/cat", cols: 0 },
        { program: "/bin/cat", rows: 1.5 },
        { program: "/bin/cat", transcript_max_chars: -5 },
        { program: "" },
        { program: "/bin/cat", args: "notalist" },
      ]
    ) {
      const e = await err("session.create", p);
      assert.equal(e.code, -32602, JSON.stringify(p));
      assert.ok(!e.message.includes("\n") && !e.message.includes("    at "), e.message);
    }
    assert.equal((await err("session.resize", { session, rows: -3, cols: 80 })).code, -32602);
    const spawnFail = await err("session.create", { program: "/nonexistent/program" });
    assert.deepEqual(spawnFail, {
      code: -32603,
      message: "cannot start `/nonexistent/program`: no such executable file",
    });
    // A matcher tree 10,000 levels deep is refused with a clear message.
    let tree = `{"type":"contains_text","value":"x"}`;
    for (let i = 0; i < 10_000; i++) tree = `{"type":"any","value":[${tree}]}`;
    await c.raw(
      `{"jsonrpc":"2.0","id":"deep","method":"session.wait","params":{"session":"${session}","matcher":${tree}}}\n`,
    );
    const deep = await c.next((m) => m.id === "deep");
    assert.equal(deep.error?.code, -32602);
    assert.match(deep.error!.message, /nested more than 64 levels/);
    const wide = Array.from({ length: 5000 }, () => ({ type: "process_exited" }));
    assert.match(
      (await err("session.wait", { session, matcher: { type: "all", value: wide } })).message,
      /more than 1024/,
    );
    assert.match(
      (await err("session.wait", {
        session,
        matcher: { type: "lua", value: { plugin: "x", predicate: "y" } },
      })).message,
      /unknown plugin: x/,
    );
    assert.match(
      (await err("session.wait", { session, matcher: { type: "screen_regex", value: "(" } })).message,
      /invalid regex/,
    );
    assert.match(
      (await err("session.wait", { session, matcher: { type: "cursor_at", value: { row: -1, col: 0 } } }))
        .message,
      /cursor_at|non-negative/,
    );
    // The host is unharmed.
    assert.deepEqual(
      await c.call("session.input", { session, action: { type: "text", value: "still-alive\n" } }),
      {
        sent: true,
      },
    );
    await c.call("session.wait", { session, matcher: { type: "contains_text", value: "still-alive" } });
  } finally {
    await h.stop();
  }
});

Deno.test("bounded cost: catastrophic regexes on a 1 MiB line run in linear time", async () => {
  const h = await startStdio();
  try {
    const c = h.client;
    const { session } = await c.call("session.create", {
      program: "/bin/sh",
      args: ["-c", "head -c 1048576 /dev/zero | tr '\\0' a; printf '!\\nEND\\n'; sleep 30"],
      cols: 200,
      rows: 50,
    });
    const end = await c.call("session.wait", {
      session,
      matcher: {
        type: "all",
        value: [{ type: "contains_text", value: "END" }, { type: "transcript_contains", value: "a!" }],
      },
      timeout_ms: 60000,
    });
    assert.equal(end.transcript_tail.length, 16384);
    const { text } = await c.call("session.transcript", { session, redact: false });
    assert.equal(text.length, 128 * 1024, "the transcript keeps transcript_max_chars characters");
    for (
      const [type, value] of [["transcript_regex", "(a+)+$"], ["transcript_regex", "(a|aa)*b"], [
        "screen_regex",
        "(a*)*b",
      ]]
    ) {
      const t0 = Date.now();
      const r = await c.request(
        "session.wait",
        { session, matcher: { type, value }, timeout_ms: 300 },
        30000,
      );
      assert.deepEqual(r.error, { code: -32001, message: "timed out waiting for matcher" });
      assert.ok(Date.now() - t0 < 10000, `${value} took ${Date.now() - t0} ms`);
    }
    const t0 = Date.now();
    await c.call("session.list");
    assert.ok(Date.now() - t0 < 2000);
  } finally {
    await h.stop();
  }
});

Deno.test("default host socket: sessions work; a request line over 1 MiB is a clear error, the host unharmed", async () => {
  const h = await startHost();
  try {
    const created = await h.call("session.create", {
      program: "/bin/sh",
      args: ["-c", "echo on-default-socket; sleep 30"],
    });
    const w = await h.call("session.wait", {
      session: created.session,
      matcher: { type: "contains_text", value: "on-default-socket" },
    });
    assert.equal(w.matched, true);
    const huge =
      `{"jsonrpc":"2.0","id":1,"method":"session.input","params":{"session":"${created.session}","action":{"type":"text","value":"${
        "x".repeat(1024 * 1024 + 10)
      }"}}}\n`;
    const [line] = await rawExchange(h.socket, huge);
    const res = JSON.parse(line);
    assert.equal(res.error.code, -32600);
    assert.match(res.error.message, /exceeds/);
    assert.deepEqual(await h.call("session.list"), { sessions: [created.session] });
  } finally {
    await h.stop();
  }
});
