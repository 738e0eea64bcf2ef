/**
 * ptywright's protocol on `paneflow serve --stdio`, both framings: the request
 * examples of ptywright's JSON-RPC reference (https://github.com/utensils/ptywright/blob/main/website/reference/json-rpc.md)
 * piped in verbatim, the request rules (no id → no answer,
 * -32700 with id null, jsonrpc "2.0", redacted errors), the echo TUI round
 * trip, and notifications (response first, off → on seeding, per session
 * changed / output / exited).
 */
import assert from "node:assert/strict";
import { FIXTURES, type Msg, spawnPaneflow, startStdio } from "./_pw.ts";

const REFERENCE_NDJSON = [
  `{ "jsonrpc": "2.0", "id": 1, "method": "server.capabilities" }`,
  `{"jsonrpc":"2.0","id":2,"method":"session.create","params":{"program":"/bin/sh","args":["-lc","printf ready"],"rows":24,"cols":80}}`,
  `{ "jsonrpc": "2.0", "id": 3, "method": "session.list" }`,
  `{"jsonrpc":"2.0","id":4,"method":"session.input","params":{ "session": "s1", "action": { "type": "text", "value": "help\\n" } }}`,
  `{"jsonrpc":"2.0","id":5,"method":"session.wait","params":{"session":"s1","matcher":{ "type": "contains_text", "value": "ready" },"timeout_ms":5000}}`,
  `{"jsonrpc":"2.0","id":6,"method":"session.snapshot","params":{ "session": "s1" }}`,
  `{"jsonrpc":"2.0","id":7,"method":"session.transcript","params":{ "session": "s1" }}`,
  `{"jsonrpc":"2.0","id":8,"method":"session.resize","params":{ "session": "s1", "rows": 40, "cols": 120 }}`,
  `{"jsonrpc":"2.0","id":9,"method":"session.kill","params":{ "session": "s1" }}`,
  `{"jsonrpc":"2.0","id":10,"method":"session.close","params":{ "session": "s1" }}`,
  `{"jsonrpc":"2.0","id":11,"method":"server.set_notifications","params":{ "enabled": true }}`,
  `{"jsonrpc":"2.0","id":12,"method":"server.set_notifications","params":{ "enabled": true, "adapters": ["e1"], "sessions": ["s2"] }}`,
];

/** Pipes `input` into `serve --stdio` and returns every stdout message once it exits. */
async function pipe(input: string, framing: "ndjson" | "lsp" = "ndjson") {
  const dir = await Deno.makeTempDir({ prefix: "pw-pipe-" });
  try {
    const child = spawnPaneflow(["serve", "--stdio", "--framing", framing], dir);
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(input));
    await w.close();
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout);
    return { code: out.code, stdout, stderr: new TextDecoder().decode(out.stderr) };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

Deno.test("ptywright's reference: every request example piped in verbatim answers as documented; exit 0 at EOF", async () => {
  const { code, stdout } = await pipe(REFERENCE_NDJSON.join("\n") + "\n");
  assert.equal(code, 0);
  const lines = stdout.trimEnd().split("\n");
  // stdout is protocol only: every line is one JSON-RPC message.
  const msgs: Msg[] = lines.map((l) => JSON.parse(l));
  for (const m of msgs) assert.equal(m.jsonrpc, "2.0");
  const byId = (id: number) => msgs.find((m) => m.id === id)!;
  const caps = byId(1).result;
  assert.equal(caps.name, "ptywright");
  assert.deepEqual(caps.framing, ["ndjson", "lsp"]);
  for (const m of ["server.capabilities", "server.set_notifications", "session.create", "session.wait"]) {
    assert.ok(caps.methods.includes(m), m);
  }
  assert.deepEqual(caps.notifications, ["session.changed", "session.output", "session.exited"]);
  assert.deepEqual(byId(2).result, { session: "s1" });
  assert.deepEqual(byId(3).result, { sessions: ["s1"] });
  // `printf ready` may already have exited: then the input is -32002, as for any exited program.
  const input = byId(4);
  assert.ok(input.result?.sent === true || input.error?.code === -32002, JSON.stringify(input));
  const wait = byId(5).result;
  assert.equal(wait.matched, true);
  assert.equal(typeof wait.sequence, "number");
  assert.equal(typeof wait.elapsed_ms, "number");
  // The terminal echoes the typed "help" when it came before the program exited: after "ready", or
  // before it when the input arrived before the shell ran printf.
  const echoed = input.result ? /^(ready(help)?|help\nready)$/ : /^ready$/;
  assert.match(wait.snapshot.plain_text, echoed);
  assert.deepEqual(wait.snapshot.size, { rows: 24, cols: 80, pixel_width: 0, pixel_height: 0 });
  assert.ok(wait.snapshot.cursor.row <= 1, JSON.stringify(wait.snapshot.cursor));
  assert.equal(wait.snapshot.cursor.visible, true);
  assert.equal(wait.snapshot.title, null);
  assert.equal(wait.snapshot.alternate_screen, false);
  assert.ok(/^(help\r?\n)?ready/.test(wait.transcript_tail), wait.transcript_tail);
  const snap = byId(6).result;
  assert.match(snap.plain_text, echoed);
  assert.equal(snap.cells.length, 24 * 80);
  assert.deepEqual(snap.cells[0], {
    row: 0,
    col: 0,
    text: snap.plain_text[0], // "r", or "h" when the echo came first
    wide: false,
    wide_continuation: false,
    style: {
      foreground: "default",
      background: "default",
      bold: false,
      dim: false,
      italic: false,
      underline: false,
      inverse: false,
    },
  });
  assert.match(byId(7).result.text, /^(help\r?\n)?ready/);
  assert.deepEqual(byId(8).result, { resized: true });
  assert.deepEqual(byId(9).result, { killed: true });
  assert.deepEqual(byId(10).result, { closed: true });
  assert.deepEqual(byId(11).result, { enabled: true });
  assert.deepEqual(byId(12).result, { enabled: true, adapters: ["e1"], sessions: ["s2"] });
});

Deno.test("ptywright's reference: the two printf examples (NDJSON capabilities, LSP session.list)", async () => {
  const a = await pipe('{"jsonrpc":"2.0","id":1,"method":"server.capabilities"}\n');
  assert.equal(a.code, 0);
  const lines = a.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 1);
  assert.ok(JSON.parse(lines[0]).result.methods.includes("session.create"));
  const b = await pipe('Content-Length: 48\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"session.list"}', "lsp");
  assert.equal(b.code, 0);
  const m = /^Content-Length: (\d+)\r\n\r\n(.*)$/s.exec(b.stdout);
  assert.ok(m, b.stdout);
  assert.equal(Number(m[1]), new TextEncoder().encode(m[2]).length);
  assert.deepEqual(JSON.parse(m[2]), { jsonrpc: "2.0", id: 1, result: { sessions: [] } });
});

Deno.test("request rules: no id is run but never answered; -32700 id null; jsonrpc 2.0; params default {}; errors redacted", async () => {
  const { code, stdout } = await pipe(
    [
      `{"jsonrpc":"2.0","method":"session.create","params":{"program":"/bin/sh","args":["-c","sleep 5"]}}`,
      `{"jsonrpc":"2.0","method":"no.such.method"}`,
      `{not json`,
      `{"jsonrpc":"1.0","id":2,"method":"session.list"}`,
      `{"jsonrpc":"2.0","id":"x","method":"session.list"}`,
      `{"jsonrpc":"2.0","id":3,"method":"token=super-secret-value"}`,
      `{"jsonrpc":"2.0","id":4,"method":"session.nope"}`,
      `{"jsonrpc":"2.0","id":5,"method":"session.create","params":{}}`,
    ].join("\n") + "\n",
  );
  assert.equal(code, 0);
  const msgs: Msg[] = stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(msgs.length, 6, stdout);
  assert.equal(msgs[0].id, null);
  assert.equal(msgs[0].error!.code, -32700);
  assert.equal(msgs[1].id, 2);
  assert.equal(msgs[1].error!.code, -32600);
  // The notification's session was created: the string id "x" is echoed.
  assert.deepEqual(msgs[2], { jsonrpc: "2.0", id: "x", result: { sessions: ["s1"] } });
  assert.equal(msgs[3].error!.code, -32601);
  assert.ok(msgs[3].error!.message.includes("token=[REDACTED]"), msgs[3].error!.message);
  assert.ok(!stdout.includes("super-secret-value"));
  assert.deepEqual(msgs[4].error, { code: -32601, message: "unknown method: session.nope" });
  assert.deepEqual(msgs[5].error, { code: -32602, message: "missing field `program`" });
});

Deno.test("echo TUI round trip over LSP framing (ptywright's end-to-end test)", async () => {
  const h = await startStdio("lsp");
  try {
    const c = h.client;
    const { session } = await c.call("session.create", {
      program: `${FIXTURES}/echo_tui.sh`,
      rows: 24,
      cols: 80,
    });
    const ready = await c.call("session.wait", {
      session,
      matcher: {
        type: "all",
        value: [{ type: "contains_text", value: "READY>" }, {
          type: "screen_stable",
          value: { min_ms: 250 },
        }],
      },
      timeout_ms: 20000,
    });
    assert.equal(ready.matched, true);
    assert.ok(ready.elapsed_ms >= 250);
    assert.deepEqual(await c.call("session.input", { session, action: { type: "text", value: "hello" } }), {
      sent: true,
    });
    await c.call("session.input", { session, action: { type: "key", value: "enter" } });
    await c.call("session.wait", { session, matcher: { type: "contains_text", value: "> hello" } });
    await c.call("session.input", { session, action: { type: "key", value: "enter" } });
    const done = await c.call("session.wait", {
      session,
      matcher: {
        type: "all",
        value: [{ type: "contains_text", value: "<answer>OK</answer>" }, {
          type: "screen_stable",
          value: { min_ms: 100 },
        }],
      },
      timeout_ms: 20000,
    });
    assert.ok(done.transcript_tail.includes("<answer>OK</answer>"));
    const snap = await c.call("session.snapshot", { session });
    assert.ok(snap.plain_text.includes("<answer>OK</answer>"));
    assert.ok(snap.plain_text.includes("> hello"));
    // The program has exited: a wait that can no longer match fails at once with -32002.
    const t0 = Date.now();
    const never = await c.request("session.wait", {
      session,
      matcher: { type: "contains_text", value: "never printed" },
      timeout_ms: 20000,
    });
    assert.equal(never.error?.code, -32002);
    assert.ok(Date.now() - t0 < 5000);
    const exited = await c.call("session.wait", { session, matcher: { type: "process_exited" } });
    assert.equal(exited.matched, true);
    assert.deepEqual(await c.call("session.kill", { session }), { killed: true });
  } finally {
    const { code } = await h.stop();
    assert.equal(code, 0);
  }
});

Deno.test("notifications: response first, then changed/output/exited; off→on seeds the cursor", async () => {
  const h = await startStdio("ndjson");
  try {
    const c = h.client;
    // Output produced before the subscription is not replayed.
    const { session } = await c.call("session.create", {
      program: "/bin/sh",
      args: ["-c", "printf 'before-sub\\n'; read x; printf 'after-%s token=abc123\\n' \"$x\"; sleep 0.3"],
    });
    await c.call("session.wait", { session, matcher: { type: "contains_text", value: "before-sub" } });
    // One more round trip to the pane's worker: the host has then applied every output event the
    // wait's answer may have overtaken, so "the current position" includes before-sub.
    await c.call("session.transcript", { session });
    const from = c.messages.length;
    await c.send({ jsonrpc: "2.0", id: 1, method: "server.set_notifications", params: { enabled: true } });
    const ack = await c.next((m) => m.id === 1, 10000, from);
    assert.deepEqual(ack.result, { enabled: true });
    // The response is the first message after the request.
    assert.equal(c.messages[from].id, 1);
    await c.send({
      jsonrpc: "2.0",
      id: 2,
      method: "session.input",
      params: { session, action: { type: "text", value: "sub\n" } },
    });
    const out = await c.next((m) =>
      m.method === "session.output" && String(m.params?.output).includes("after-sub")
    );
    const sent = c.messages.findIndex((m) => m.id === 2);
    assert.ok(sent >= 0 && sent < c.messages.indexOf(out), "the response comes before its notifications");
    assert.ok(String(out.params!.output).includes("token=[REDACTED]"), "output is redacted");
    const outputs = c.messages.filter((m) => m.method === "session.output").map((m) =>
      String(m.params!.output)
    );
    assert.ok(!outputs.join("").includes("before-sub"), outputs.join("|"));
    const changed = await c.next((m) => m.method === "session.changed");
    assert.equal(changed.params!.session, session);
    assert.equal(typeof changed.params!.sequence, "number");
    await c.next((m) => m.method === "session.exited" && m.params!.session === session);
    // Exited is sent once, even after more requests.
    await c.call("session.list");
    await c.call("server.capabilities");
    assert.equal(c.messages.filter((m) => m.method === "session.exited").length, 1);
    // Off: nothing more.
    assert.deepEqual(await c.call("server.set_notifications", { enabled: false }), { enabled: false });
    const n = c.messages.length;
    const s2 =
      (await c.call("session.create", { program: "/bin/sh", args: ["-c", "echo quiet-now"] })).session;
    await c.call("session.wait", { session: s2, matcher: { type: "process_exited" } });
    await c.call("session.list");
    assert.equal(c.messages.slice(n).filter((m) => m.method).length, 0);
  } finally {
    assert.equal((await h.stop()).code, 0);
  }
});

Deno.test("notifications: a sessions filter scopes the stream; dropped:true when the bound evicted output", async () => {
  const h = await startStdio();
  try {
    const c = h.client;
    const quiet =
      (await c.call("session.create", { program: "/bin/sh", args: ["-c", "read x; echo quiet-$x"] }))
        .session;
    const loud = (await c.call("session.create", {
      program: "/bin/sh",
      // One write of ~1.6 KB: whatever the polls' timing, one delta outgrows the 200-character bound.
      args: [
        "-c",
        'read x; out=$(yes line-xxxxxxxxxxxxxxxxxxxxxxxxxx | head -50); printf "%s\\ndone-%s\\n" "$out" "$x"',
      ],
      transcript_max_chars: 200,
    })).session;
    assert.deepEqual(await c.call("server.set_notifications", { enabled: true, sessions: [loud] }), {
      enabled: true,
      sessions: [loud],
    });
    const from = c.messages.length;
    await c.call("session.input", { session: quiet, action: { type: "text", value: "a\n" } });
    await c.send({
      jsonrpc: "2.0",
      id: "w",
      method: "session.input",
      params: { session: loud, action: { type: "text", value: "b\n" } },
    });
    await c.next((m) => m.id === "w", 10000, from);
    await c.call("session.wait", {
      session: loud,
      matcher: {
        type: "all",
        value: [{ type: "process_exited" }, { type: "screen_stable", value: { min_ms: 50 } }],
      },
    });
    await c.call("session.wait", { session: quiet, matcher: { type: "process_exited" } });
    await c.call("session.list");
    const notes = c.messages.slice(from).filter((m) => m.method);
    assert.ok(notes.length > 0);
    assert.ok(notes.every((m) => m.params!.session === loud), JSON.stringify(notes).slice(0, 500));
    const outputs = notes.filter((m) => m.method === "session.output");
    assert.ok(outputs.some((m) => m.params!.dropped === true), JSON.stringify(outputs).slice(0, 800));
    assert.ok(outputs.some((m) => String(m.params!.output).includes("done-b")));
  } finally {
    await h.stop();
  }
});
