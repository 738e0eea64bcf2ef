/**
 * Snapshots, transcripts and redaction of ptywright sessions with real
 * programs: colours, wide characters, the alternate screen, application
 * cursor and keypad modes, OSC titles, a printed secret, a 0600 raw
 * transcript, and `interrupt` vs `kill` on a program that ignores SIGINT.
 */
import assert from "node:assert/strict";
import { startStdio } from "./_pw.ts";

const ESC = "\x1b";

Deno.test("snapshot: colours, styles, wide characters, modes and the OSC title", async () => {
  const h = await startStdio();
  try {
    const c = h.client;
    const script = [
      `printf '${ESC}]0;my title\\007'`,
      `printf '${ESC}[1;31mred${ESC}[0m ${ESC}[38;2;1;2;3;48;5;200mrgb${ESC}[0m ${ESC}[3;4;7;2mx${ESC}[0m 你好\\n'`,
      `printf '${ESC}[?1h${ESC}='`,
      "read x",
      `printf '${ESC}[?1049halt-screen'`,
      "read y",
      `printf '${ESC}[?1049l${ESC}[?25l'`,
      "sleep 10",
    ].join("; ");
    const { session } = await c.call("session.create", {
      program: "/bin/sh",
      args: ["-c", script],
      rows: 10,
      cols: 40,
      pixel_width: 400,
      pixel_height: 200,
    });
    const w = await c.call("session.wait", {
      session,
      matcher: { type: "screen_regex", value: "你好" },
    });
    const snap = w.snapshot;
    assert.equal(snap.title, "my title");
    assert.deepEqual(snap.size, { rows: 10, cols: 40, pixel_width: 400, pixel_height: 200 });
    assert.equal(snap.cells.length, 400);
    const cell = (row: number, col: number) => snap.cells[row * 40 + col];
    assert.equal(cell(0, 0).text, "r");
    assert.equal(cell(0, 0).style.foreground, "idx:1");
    assert.equal(cell(0, 0).style.bold, true);
    assert.equal(cell(0, 4).text, "r");
    assert.equal(cell(0, 4).style.foreground, "rgb:1:2:3");
    assert.equal(cell(0, 4).style.background, "idx:200");
    const x = cell(0, 8);
    assert.equal(x.text, "x");
    assert.deepEqual(
      [x.style.italic, x.style.underline, x.style.inverse, x.style.dim, x.style.bold],
      [true, true, true, true, false],
    );
    assert.equal(cell(0, 10).text, "你");
    assert.equal(cell(0, 10).wide, true);
    assert.equal(cell(0, 11).wide_continuation, true);
    assert.equal(cell(0, 11).text, "");
    assert.equal(cell(0, 12).text, "好");
    assert.equal(snap.plain_text, "red rgb x 你好");
    await c.call("session.wait", { session, matcher: { type: "cursor_at", value: { row: 1, col: 0 } } });
    const modes = await c.call("session.snapshot", { session });
    assert.equal(modes.application_cursor, true);
    assert.equal(modes.application_keypad, true);
    assert.equal(modes.alternate_screen, false);
    await c.call("session.input", { session, action: { type: "key", value: "enter" } });
    const alt = await c.call("session.wait", {
      session,
      matcher: { type: "contains_text", value: "alt-screen" },
    });
    assert.equal(alt.snapshot.alternate_screen, true);
    // The cursor keeps its row on the switch (as vt100 does).
    assert.equal(alt.snapshot.plain_text.trim(), "alt-screen");
    await c.call("session.input", { session, action: { type: "text", value: "\r" } });
    await c.call("session.wait", {
      session,
      matcher: {
        type: "all",
        value: [{ type: "contains_text", value: "你好" }, { type: "screen_stable", value: { min_ms: 50 } }],
      },
    });
    const back = await c.call("session.snapshot", { session });
    assert.equal(back.alternate_screen, false);
    assert.equal(back.cursor.visible, false);
    // The transcript keeps the raw output, escapes included.
    const { text } = await c.call("session.transcript", { session, redact: false });
    assert.ok(text.includes(`${ESC}[?1049h`));
    // Resizing bumps the sequence and the snapshot's size.
    const before = back.sequence;
    await c.call("session.resize", { session, rows: 12, cols: 50 });
    const resized = await c.call("session.snapshot", { session });
    assert.deepEqual(resized.size, { rows: 12, cols: 50, pixel_width: 0, pixel_height: 0 });
    assert.ok(resized.sequence > before);
  } finally {
    await h.stop();
  }
});

Deno.test("redaction: on by default for snapshot, transcript and title; redact:false; per-call rules", async () => {
  const h = await startStdio();
  try {
    const c = h.client;
    const { session } = await c.call("session.create", {
      program: "/bin/sh",
      args: [
        "-c",
        `printf '${ESC}]2;api_key=titlesecret\\007'; echo 'token=super-secret'; echo 'internal-123 public hunter2'; sleep 10`,
      ],
    });
    const w = await c.call("session.wait", { session, matcher: { type: "contains_text", value: "hunter2" } });
    // The wait result is not redacted (as ptywright).
    assert.ok(w.snapshot.plain_text.includes("token=super-secret"));
    const snap = await c.call("session.snapshot", { session });
    assert.ok(snap.plain_text.includes("token=[REDACTED]"));
    assert.ok(!JSON.stringify(snap).includes("super-secret"), "cells are redacted too");
    assert.equal(snap.title, "api_key=[REDACTED]");
    const row0 = snap.cells.slice(0, 80).map((x: { text: string }) => x.text || " ").join("").trimEnd();
    assert.equal(row0, "token=[REDACTED]");
    // In the transcript the title's BEL joins it to the next line: one secret run, all of it redacted.
    const redacted = (await c.call("session.transcript", { session })).text;
    assert.ok(redacted.includes("[REDACTED]") && !redacted.includes("super-secret"), redacted);
    assert.ok(
      (await c.call("session.transcript", { session, redact: false })).text.includes("token=super-secret"),
    );
    const custom = await c.call("session.transcript", {
      session,
      redaction: {
        enabled: false,
        replacement: "[X]",
        extra_regexes: ["internal-[0-9]+"],
        extra_literals: ["hunter2"],
      },
    });
    assert.ok(custom.text.includes("[X] public [X]"), custom.text);
    assert.ok(!custom.text.includes("super-secret"));
    // A bad regex is -32602 naming it, checked before the session.
    const bad = await c.request("session.transcript", {
      session: "missing",
      redaction: { enabled: true, replacement: "x", extra_regexes: ["(unclosed"] },
    });
    assert.equal(bad.error?.code, -32602);
    assert.ok(bad.error!.message.startsWith("invalid redaction regex `(unclosed`"), bad.error!.message);
    const missing = await c.request("session.snapshot", { session, redaction: { replacement: "x" } });
    assert.deepEqual(missing.error, { code: -32602, message: "missing field `redaction.enabled`" });
  } finally {
    await h.stop();
  }
});

Deno.test("redaction: a screen with nothing to redact is sent as it is; a secret only in the title is still caught", async () => {
  const h = await startStdio();
  try {
    const c = h.client;
    const clean = (await c.call("session.create", {
      program: "/bin/sh",
      args: ["-c", `printf '${ESC}[1;31mbuild${ESC}[0m ok: 12 files 宽字\n"quoted" \\ back'; sleep 10`],
    })).session;
    await c.call("session.wait", { session: clean, matcher: { type: "contains_text", value: "back" } });
    const plain = await c.call("session.snapshot", { session: clean });
    assert.ok(plain.plain_text.includes('"quoted" \\ back'), plain.plain_text);
    assert.deepEqual(plain, await c.call("session.snapshot", { session: clean, redact: false }));
    const titled = (await c.call("session.create", {
      program: "/bin/sh",
      args: ["-c", `printf '${ESC}]2;password=titleonly\\007'; echo visible; sleep 10`],
    })).session;
    await c.call("session.wait", { session: titled, matcher: { type: "contains_text", value: "visible" } });
    const snap = await c.call("session.snapshot", { session: titled });
    assert.equal(snap.title, "password=[REDACTED]");
    assert.equal(
      (await c.call("session.snapshot", {
        session: titled,
        redaction: { enabled: true, replacement: "#", extra_literals: ["visible"] },
      }))
        .plain_text,
      "#",
    );
  } finally {
    await h.stop();
  }
});

Deno.test("raw transcript: created 0600, refuses to overwrite, appends on request", async () => {
  const h = await startStdio();
  const dir = await Deno.makeTempDir();
  try {
    const c = h.client;
    const path = `${dir}/raw.log`;
    const { session } = await c.call("session.create", {
      program: "/bin/sh",
      args: ["-c", "printf 'raw token=abc\\n'"],
      raw_transcript_path: path,
    });
    await c.call("session.wait", { session, matcher: { type: "process_exited" } });
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.ok((await Deno.readTextFile(path)).includes("raw token=abc"), "raw and unredacted");
    const again = await c.request("session.create", { program: "/bin/true", raw_transcript_path: path });
    assert.equal(again.error?.code, -32603);
    assert.ok(again.error!.message.includes("already exists"), again.error!.message);
    const appended = await c.call("session.create", {
      program: "/bin/sh",
      args: ["-c", "printf 'second\\n'"],
      raw_transcript_path: path,
      raw_transcript_append: true,
    });
    await c.call("session.wait", { session: appended.session, matcher: { type: "process_exited" } });
    const text = await Deno.readTextFile(path);
    assert.ok(text.includes("raw token=abc") && text.includes("second"), text);
    const noPath = await c.request("session.create", { program: "/bin/true", raw_transcript_append: true });
    assert.deepEqual(noPath.error, {
      code: -32602,
      message: "raw_transcript_append requires raw_transcript_path",
    });
  } finally {
    await h.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("interrupt vs kill: a program ignoring SIGINT survives ^C, not kill; writes after kill are -32002", async () => {
  const h = await startStdio();
  try {
    const c = h.client;
    const { session } = await c.call("session.create", {
      program: "/bin/sh",
      args: ["-c", `trap '' INT; echo armed; while :; do sleep 0.2; done`],
    });
    await c.call("session.wait", { session, matcher: { type: "contains_text", value: "armed" } });
    assert.deepEqual(await c.call("session.input", { session, action: { type: "interrupt" } }), {
      sent: true,
    });
    const still = await c.request("session.wait", {
      session,
      matcher: { type: "process_exited" },
      timeout_ms: 600,
    });
    assert.deepEqual(still.error, { code: -32001, message: "timed out waiting for matcher" });
    assert.deepEqual(await c.call("session.input", { session, action: { type: "kill" } }), { sent: true });
    const gone = await c.call("session.wait", {
      session,
      matcher: { type: "process_exited" },
      timeout_ms: 10000,
    });
    assert.equal(gone.matched, true);
    const after = await c.request("session.input", { session, action: { type: "text", value: "x" } });
    assert.deepEqual(after.error, { code: -32002, message: "session is closed" });
    // Killed, still readable until closed.
    assert.ok((await c.call("session.snapshot", { session })).plain_text.includes("armed"));
    assert.deepEqual(await c.call("session.list"), { sessions: [session] });
    assert.deepEqual(await c.call("session.close", { session }), { closed: true });
    assert.deepEqual(await c.call("session.list"), { sessions: [] });
    const closed = await c.request("session.snapshot", { session });
    assert.deepEqual(closed.error, { code: -32602, message: `unknown session: ${session}` });
  } finally {
    await h.stop();
  }
});
