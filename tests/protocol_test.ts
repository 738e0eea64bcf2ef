/**
 * The JSON-RPC socket at the byte level: parse errors, bad envelopes, the
 * line cap, invalid UTF-8, unknown methods, param validation naming the
 * field, pipelining, the connection limit, the idle deadline, and that the
 * host survives all of it.
 */
import assert from "node:assert/strict";
import { rawExchange, readPane, type TestHost, waitUntil, withHost } from "./_harness.ts";

const enc = new TextEncoder();

function req(id: unknown, method: string, params?: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }) + "\n";
}

interface Wire {
  jsonrpc: string;
  id: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

async function exchange(host: TestHost, data: string | Uint8Array, untilLines = 1): Promise<Wire[]> {
  const lines = await rawExchange(host.socket, data, { untilLines });
  return lines.map((l) => JSON.parse(l));
}

/** A connection we keep open and read line by line. */
class Conn {
  #buf = "";
  #dec = new TextDecoder();
  private constructor(readonly conn: Deno.UnixConn) {}
  static async open(path: string): Promise<Conn> {
    return new Conn(await Deno.connect({ transport: "unix", path }));
  }
  async write(text: string | Uint8Array) {
    const bytes = typeof text === "string" ? enc.encode(text) : text;
    let off = 0;
    while (off < bytes.length) off += await this.conn.write(bytes.subarray(off));
  }
  /** The next line, or null when the host closed the connection; fails after `timeoutMs`. */
  async line(timeoutMs = 5000): Promise<string | null> {
    const deadline = Date.now() + timeoutMs;
    const chunk = new Uint8Array(65536);
    while (true) {
      const nl = this.#buf.indexOf("\n");
      if (nl >= 0) {
        const l = this.#buf.slice(0, nl);
        this.#buf = this.#buf.slice(nl + 1);
        return l;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`No line within ${timeoutMs} ms`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), left)));
      const n = await Promise.race([this.conn.read(chunk).catch(() => null), timeout]);
      clearTimeout(timer);
      if (n === "timeout") throw new Error(`No line within ${timeoutMs} ms`);
      if (n === null) return null;
      this.#buf += this.#dec.decode(chunk.subarray(0, n), { stream: true });
    }
  }
  close() {
    try {
      this.conn.close();
    } catch { /* closed */ }
  }
}

Deno.test("protocol: malformed input gets the right JSON-RPC errors and the host survives it", async (t) => {
  await withHost({}, async (host) => {
    const ws = await host.json<{ surface_id: number }>([
      "new",
      "--pane-name",
      "keeper",
      "-c",
      "echo still-here; sleep 300",
    ]);
    const sid = ws.surface_id;
    await waitUntil("the pane's output", async () => (await readPane(host, "keeper")).includes("still-here"));

    await t.step("bad JSON is -32700 and the connection keeps serving", async () => {
      const [bad, ok] = await exchange(host, "{not json\n" + req(2, "system.ping"), 2);
      assert.equal(bad.error?.code, -32700);
      assert.equal(bad.id, null);
      assert.match(bad.error!.message, /Parse error/);
      assert.equal(ok.id, 2);
      assert.equal(ok.result?.pong, true);
    });

    await t.step("invalid UTF-8 is -32700", async () => {
      const bytes = new Uint8Array([
        ...enc.encode('{"jsonrpc":"2.0","id":1,"method":"system.ping","params":{"x":"'),
        0xff,
        0xfe,
        0xc3,
        ...enc.encode('"}}\n'),
        ...enc.encode(req(3, "system.ping")),
      ]);
      const [bad, ok] = await exchange(host, bytes, 2);
      assert.equal(bad.error?.code, -32700);
      assert.match(bad.error!.message, /UTF-8/);
      assert.equal(ok.id, 3);
      assert.equal(ok.result?.pong, true);
    });

    await t.step("bad envelopes are -32600", async () => {
      const cases = [
        "[]",
        "42",
        '"system.ping"',
        "null",
        '{"jsonrpc":"1.0","id":1,"method":"system.ping"}',
        '{"id":1,"method":"system.ping"}',
        '{"jsonrpc":"2.0","id":1}',
        '{"jsonrpc":"2.0","id":1,"method":""}',
        '{"jsonrpc":"2.0","id":1,"method":7}',
        '{"jsonrpc":"2.0","id":{"a":1},"method":"system.ping"}',
        '{"jsonrpc":"2.0","id":1,"method":"system.ping","params":"x"}',
        '{"jsonrpc":"2.0","id":1,"method":"system.ping","params":3}',
      ];
      const answers = await exchange(host, cases.join("\n") + "\n", cases.length);
      assert.equal(answers.length, cases.length);
      answers.forEach((a, i) => {
        assert.equal(a.jsonrpc, "2.0", cases[i]);
        assert.equal(a.error?.code, -32600, `${cases[i]} -> ${JSON.stringify(a)}`);
        assert.equal(a.result, undefined);
      });
    });

    await t.step("a line over 1 MiB is -32600 and the connection is closed", async () => {
      const big = req(1, "system.ping", { pad: "x".repeat(1024 * 1024 + 10) });
      const lines = await rawExchange(host.socket, big + req(2, "system.ping"), { untilLines: 2 });
      assert.equal(lines.length, 1, `only the error, then close: ${lines.map((l) => l.slice(0, 80))}`);
      const a = JSON.parse(lines[0]);
      assert.equal(a.error.code, -32600);
      assert.match(a.error.message, /exceeds/);
      // An endless line with no newline at all is cut off the same way.
      const endless = await rawExchange(host.socket, "x".repeat(1024 * 1024 + 70_000), { untilLines: 1 });
      assert.equal(JSON.parse(endless[0]).error.code, -32600);
    });

    await t.step("an unknown method is -32601", async () => {
      const [a] = await exchange(host, req(5, "surface.explode", {}));
      assert.equal(a.id, 5);
      assert.equal(a.error?.code, -32601);
      assert.match(a.error!.message, /surface\.explode/);
      const [b] = await exchange(host, req(6, "__proto__", {}));
      assert.equal(b.error?.code, -32601);
      const [c] = await exchange(host, req(7, "toString", {}));
      assert.equal(c.error?.code, -32601);
    });

    await t.step("invalid params are -32602 naming the field", async () => {
      const cases: [string, unknown, RegExp][] = [
        ["surface.read", { surface_id: sid, bogus: 1 }, /bogus/],
        ["surface.read", { surface_id: "one" }, /surface_id/],
        ["surface.read", { surface_id: sid, lines: "many" }, /lines/],
        ["surface.read", { surface_id: sid, offset: -1 }, /offset/],
        ["surface.read", {}, /surface_id/],
        ["surface.search", { surface_id: sid, pattern: 5 }, /pattern/],
        ["workspace.select", { index: -1 }, /index/],
        ["workspace.select", { index: 1.5 }, /index/],
        ["system.ping", { extra: true }, /extra/],
        ["surface.split", { direction: "x" }, /direction/],
        ["workspace.create", { layout: "spiral" }, /layout/],
        ["surface.rename", { surface_id: sid }, /name/],
        ["surface.rename", { surface_id: sid, name: "n".repeat(257) }, /"name": Too big/],
        ["surface.read", { surface_id: sid, lines: 2.5 }, /"lines": expected an integer/],
        [
          "surface.split",
          { direction: "h", env: { "A=B": "x" } },
          /"env\.A=B": an environment variable name/,
        ],
        [
          "surface.split",
          { direction: "h", env: { A: "x\0y" } },
          /"env\.A": an environment value cannot hold NUL/,
        ],
        [
          "workspace.restore_layout",
          { layout: { direction: "h", children: [{ surface_id: sid }, { surface_id: sid }], sizes: [1] } },
          /"layout\.sizes": sizes needs one weight per child/,
        ],
        [
          "workspace.restore_layout",
          {
            layout: {
              direction: "h",
              children: [{ surface_id: sid }, { surface_id: sid }],
              sizes: [1e308, 1],
            },
          },
          /"layout\.sizes\.0": Too big/,
        ],
      ];
      for (const [method, params, field] of cases) {
        const [a] = await exchange(host, req(9, method, params));
        assert.equal(a.id, 9);
        assert.equal(a.error?.code, -32602, `${method} ${JSON.stringify(params)} -> ${JSON.stringify(a)}`);
        assert.match(a.error!.message, field, `${method} ${JSON.stringify(params)}`);
      }
      // Params given as an array are not an object of named fields.
      const [arr] = await exchange(host, req(10, "surface.read", [sid]));
      assert.equal(arr.error?.code, -32602);
      assert.match(arr.error!.message, /"params" must be an object of named fields, not an array/);
      // Thousands of unknown fields: the message names a few and counts the rest.
      const many = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, 1]));
      const [long] = await exchange(host, req(11, "system.ping", many));
      assert.equal(long.error?.code, -32602);
      assert.match(long.error!.message, /unknown field "k0", "k1", "k2", "k3", "k4", and 59995 more$/);
      // Counts are clamped however large: lines 1e300 reads at most 4000.
      const [huge] = await exchange(host, req(12, "surface.read", { surface_id: sid, lines: 1e300 }));
      assert.equal(huge.error, undefined, JSON.stringify(huge.error));
      assert.ok((huge.result!.lines as number) <= 4000);
    });

    await t.step("absurdly nested params are -32602, not an internal error", async () => {
      let tree = `{"surface_id":${sid}}`;
      for (let i = 0; i < 20_000; i++) tree = `{"direction":"h","children":[${tree}]}`;
      const line =
        `{"jsonrpc":"2.0","id":1,"method":"workspace.restore_layout","params":{"layout":${tree}}}\n`;
      const [a] = await exchange(host, line);
      assert.equal(a.error?.code, -32602, JSON.stringify(a));
      const deepArray = "[".repeat(100_000) + "]".repeat(100_000) + "\n";
      const [b] = await exchange(host, deepArray);
      assert.equal(b.error?.code, -32600);
      const deepObject = '{"a":'.repeat(100_000) + "1" + "}".repeat(100_000);
      const [c] = await exchange(
        host,
        `{"jsonrpc":"2.0","id":1,"method":"system.ping","params":${deepObject}}\n`,
      );
      assert.equal(c.error?.code, -32602);
    });

    await t.step("a request for a pane that does not exist is -32602 with a reason", async () => {
      const [a] = await exchange(host, req(1, "surface.read", { surface_id: 9999 }));
      assert.equal(a.error?.code, -32602);
      assert.match(a.error!.message, /9999/);
      assert.deepEqual(a.error?.data, { reason: "surface_not_found" });
      // Listing the panes of a workspace that does not exist is the same kind of error.
      const [b] = await exchange(host, req(2, "surface.list", { workspace: 99 }));
      assert.equal(b.error?.code, -32602);
      assert.deepEqual(b.error?.data, { reason: "workspace_not_found" });
    });

    await t.step("several requests on one connection are answered in order", async () => {
      // The first is slow (a submit waits submit_paste_delay_ms), the rest are fast.
      const batch = req("a", "surface.send_text", { surface_id: sid, text: "", submit: true }) +
        req("b", "system.ping") +
        req("c", "bogus.method") +
        req("d", "system.identify") +
        req(null, "system.ping") +
        req(42, "workspace.list");
      const answers = await exchange(host, batch, 6);
      assert.deepEqual(answers.map((a) => a.id), ["a", "b", "c", "d", null, 42]);
      assert.equal(answers[0].result?.submitted, true);
      assert.equal(answers[1].result?.pong, true);
      assert.equal(answers[2].error?.code, -32601);
      assert.equal(answers[3].result?.name, "paneflow");
      assert.equal(answers[3].result?.protocol, 1);
      assert.equal(answers[4].result?.pong, true);
      assert.ok(Array.isArray(answers[5].result?.workspaces));
    });

    await t.step("a notification (no id) gets no answer", async () => {
      const note = JSON.stringify({ jsonrpc: "2.0", method: "system.ping", params: {} }) + "\n";
      const answers = await exchange(host, note + req(8, "system.ping"), 1);
      assert.equal(answers.length, 1);
      assert.equal(answers[0].id, 8);
    });

    await t.step("a last request without its newline is answered when the client stops sending", async () => {
      const c = await Conn.open(host.socket);
      try {
        await c.write(req(13, "system.ping").trimEnd());
        await c.conn.closeWrite();
        const line = await c.line();
        assert.equal(JSON.parse(line!).id, 13);
      } finally {
        c.conn.close();
      }
    });

    await t.step("system.identify and system.capabilities describe the host", async () => {
      const id = await host.call("system.identify");
      assert.equal(id.name, "paneflow");
      assert.equal(typeof id.version, "string");
      assert.equal(id.protocol, 1);
      const caps = await host.call("system.capabilities");
      assert.equal(caps.scripting, true);
      for (const m of ["system.ping", "surface.read", "surface.send_text", "surface.send_keystroke"]) {
        assert.ok(caps.methods.includes(m), m);
      }
    });

    await t.step("after all that the host answers ping and no pane was lost", async () => {
      const [a] = await exchange(host, req(1, "system.ping"));
      assert.equal(a.result?.pong, true);
      const list = await host.call("surface.list");
      assert.deepEqual(list.surfaces.map((s) => [s.surface_id, s.exited]), [[sid, false]]);
      assert.match(await readPane(host, "keeper"), /still-here/);
      assert.doesNotMatch(host.log(), /internal error/i);
    });
  });
});

Deno.test("protocol: the 17th concurrent connection gets -32000 and is closed", async () => {
  await withHost({}, async (host) => {
    const held: Conn[] = [];
    try {
      for (let i = 0; i < 16; i++) {
        const c = await Conn.open(host.socket);
        held.push(c);
        // Make sure the host has accepted and counted this one before opening the next.
        await c.write(req(i, "system.ping"));
        assert.equal(JSON.parse((await c.line())!).id, i);
      }
      const extra = await Conn.open(host.socket);
      try {
        const line = await extra.line();
        assert.ok(line, "the 17th connection gets an answer before being closed");
        const a = JSON.parse(line!);
        assert.equal(a.error.code, -32000);
        assert.match(a.error.message, /16/);
        assert.equal(await extra.line(), null, "then the host closes it");
      } finally {
        extra.close();
      }
      // A CLI verb turned away says the host is busy, not that it is unreachable.
      const busy = await host.cli(["ls"]);
      assert.equal(busy.code, 1);
      assert.match(
        busy.stderr,
        /^paneflow: Too many connections: the host serves at most 16 calls at once, held by .*; retry later \(see them with: paneflow clients\)\n$/,
      );
      // The 16 held connections still work.
      await held[15].write(req("still", "system.ping"));
      assert.equal(JSON.parse((await held[15].line())!).id, "still");
    } finally {
      for (const c of held) c.close();
    }
    // Once they are gone a new connection is served again.
    await waitUntil("a slot to free up", async () => {
      const [a] = await exchange(host, req(1, "system.ping"));
      return a.result?.pong === true;
    });
  });
});

Deno.test("protocol: a silent connection is closed after the idle read deadline", async () => {
  await withHost({ config: '{"host": {"idle_timeout_secs": 0.5}}' }, async (host) => {
    const silent = await Conn.open(host.socket);
    const started = Date.now();
    try {
      assert.equal(await silent.line(5000), null, "the host closes a connection that never speaks");
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 400, `closed after ${elapsed} ms, not before the deadline`);
    } finally {
      silent.close();
    }

    // A client that spoke once and then went quiet is closed too.
    const quiet = await Conn.open(host.socket);
    try {
      await quiet.write(req(1, "system.ping"));
      assert.equal(JSON.parse((await quiet.line())!).id, 1);
      assert.equal(await quiet.line(5000), null);
    } finally {
      quiet.close();
    }

    // A half-written request does not hold the slot either.
    const partial = await Conn.open(host.socket);
    try {
      await partial.write('{"jsonrpc":"2.0","id":1,"meth');
      assert.equal(await partial.line(5000), null);
    } finally {
      partial.close();
    }

    // 16 silent clients cannot lock others out for long.
    const squatters = await Promise.all(Array.from({ length: 16 }, () => Conn.open(host.socket)));
    try {
      await waitUntil("the squatters to be dropped", async () => {
        const [a] = await exchange(host, req(1, "system.ping"));
        return a.result?.pong === true;
      }, { timeoutMs: 5000 });
    } finally {
      for (const c of squatters) c.close();
    }
  });
});

// A client that pipelines requests and never reads the answers would block the host's write
// forever; the write deadline (idle_timeout_secs) closes it instead.
Deno.test({
  name: "protocol: clients that never read their answers cannot hold every slot",
  fn: async () => {
    await withHost({ config: '{"host": {"idle_timeout_secs": 0.5}}' }, async (host) => {
      await host.json(["new", "-c", "seq 1 5000; exec sleep 300"]);
      await waitUntil("the output", async () => {
        const r = await host.call("surface.read", { surface_id: 1 });
        return r.total_lines >= 5000;
      });
      const big = req(1, "surface.read", { surface_id: 1, lines: 4000 }).repeat(200);
      const hogs: Conn[] = [];
      try {
        for (let i = 0; i < 16; i++) {
          const c = await Conn.open(host.socket);
          c.write(big).catch(() => {});
          hogs.push(c);
        }
        await waitUntil("the non-reading clients to be dropped", async () => {
          const [a] = await exchange(host, req(1, "system.ping"));
          return a.result?.pong === true;
        }, { timeoutMs: 5000 });
      } finally {
        for (const c of hogs) c.close();
      }
    });
  },
});
