/**
 * ptywright's `bracketed_paste` action into a real program that reads
 * pastes: bash's readline, with bracketed paste on. A text that holds the
 * paste terminator ESC[201~ must arrive as one paste: readline keeps a
 * pasted newline in its edit buffer until Enter, while a paste ended early
 * by the terminator would hand the newline over as a key, and the first
 * line would run at once.
 */
import assert from "node:assert/strict";
import { startStdio } from "./_pw.ts";

Deno.test("session.input bracketed_paste: a text holding ESC[201~ reaches readline as one paste", async () => {
  const h = await startStdio();
  try {
    const c = h.client;
    const rc = `${h.dir}/bashrc`;
    await Deno.writeTextFile(rc, "bind 'set enable-bracketed-paste on'\nPS1='READY$ '\n");
    const { session } = await c.call("session.create", {
      program: "bash",
      args: ["--noprofile", "--rcfile", rc, "-i"],
      env: { INPUTRC: "/dev/null", HISTFILE: "/dev/null" },
      rows: 20,
      cols: 100,
    });
    await c.call("session.wait", { session, matcher: { type: "contains_text", value: "READY$" } });

    // Two commands; the terminator between them would end the paste after the first.
    const text = "printf 'A%s\\n' 1\x1b[201~\nprintf 'B%s\\n' 2";
    assert.deepEqual(
      await c.call("session.input", { session, action: { type: "bracketed_paste", value: text } }),
      { sent: true },
    );
    // The second line is shown in the edit buffer: everything before it in the paste has arrived.
    const pasted = await c.call("session.wait", {
      session,
      matcher: { type: "contains_text", value: "printf 'B%s\\n' 2" },
    });
    const before = pasted.snapshot.plain_text as string;
    assert.match(before, /printf 'A%s\\n' 1/);
    assert.doesNotMatch(before, /A1/, `the first line ran before Enter: the paste ended early\n${before}`);

    // One Enter runs both lines, in order: readline held them as one edit.
    await c.call("session.input", { session, action: { type: "key", value: "enter" } });
    const ran = await c.call("session.wait", {
      session,
      matcher: { type: "screen_regex", value: "A1\\s+B2\\s+READY\\$" },
    });
    assert.doesNotMatch(ran.snapshot.plain_text, /\[201~|201~/, "no piece of the terminator was typed");
  } finally {
    await h.stop();
  }
});
