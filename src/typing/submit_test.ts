import assert from "node:assert/strict";
import { submitDelayMs } from "./submit.ts";

Deno.test("submitDelayMs: the base plus 5 ms per KiB, at most 1 s more", () => {
  assert.equal(submitDelayMs(70, 0), 70);
  assert.equal(submitDelayMs(70, 1023), 70);
  assert.equal(submitDelayMs(70, 1024), 75);
  assert.equal(submitDelayMs(70, 10 * 1024 + 5), 120);
  assert.equal(submitDelayMs(70, 64 * 1024), 390);
  assert.equal(submitDelayMs(0, 200 * 1024), 1000);
  assert.equal(submitDelayMs(0, 201 * 1024), 1000);
  assert.equal(submitDelayMs(70, 10_000_000), 1070);
});

/**
 * The submit race: the first Enter is taken but the agent's redraw lags, so
 * the input box still shows the prompt when the retry is due, and a
 * permission dialog opens right after that read. The retry must not answer
 * the dialog: it reads the screen again right before writing.
 */
Deno.test("a retried Enter is never pressed into a dialog that opened after the screen was read", async () => {
  const { submitToAgent } = await import("./submit.ts");
  const text = "RUN echo hi > f.txt";
  const writes: { data: string; dialog: boolean }[] = [];
  let firstEnterAt = 0;
  let dialog = false;
  const holding = {
    verdict: { rule: "idle_prompt", state: "idle", message: null, note: "" },
    composer: text,
  };
  const dialogScreen = {
    verdict: { rule: "permission_dialog", state: "waiting_for_input", message: "Shell command", note: "" },
    composer: null,
  };
  const pool = {
    write(_id: number, data: string) {
      writes.push({ data, dialog });
      if (data === "\r" && !firstEnterAt) firstEnterAt = Date.now();
      return Promise.resolve();
    },
  };
  const agents = {
    screenNow() {
      if (dialog) return Promise.resolve(dialogScreen);
      if (!firstEnterAt) return Promise.resolve({ ...holding, composer: writes.length ? text : "" });
      // The read the retry decision is made on (700 ms after the Enter): the box still holds the
      // prompt, and the dialog opens right after it.
      if (Date.now() - firstEnterAt >= 700) dialog = true;
      return Promise.resolve(holding);
    },
    onPrompt: () => () => {},
    stateOf: () => (dialog ? "waiting_for_input" : "idle"),
    hookedOf: () => false,
    toolOf: () => "opencode",
    rulesOf: () => ({}),
  };
  const r = await submitToAgent({
    // deno-lint-ignore no-explicit-any
    pool: pool as any,
    // deno-lint-ignore no-explicit-any
    agents: agents as any,
    id: 1,
    text,
    bracketed: true,
    delayMs: 0,
  });
  const enters = writes.filter((w) => w.data === "\r");
  assert.equal(enters.filter((w) => w.dialog).length, 0, "no Enter written while the dialog was open");
  assert.equal(enters.length, 1);
  assert.equal(r.status, "submitted");
  assert.match(r.evidence, /permission dialog/);
});

Deno.test("composerHolds: the text, or a long paste's placeholder (Claude Code's, opencode's)", async () => {
  const { composerHolds } = await import("./submit.ts");
  assert.ok(composerHolds("ECHO hi", "ECHO hi"));
  assert.ok(!composerHolds("", "ECHO hi"));
  assert.ok(!composerHolds(null, "ECHO hi"));
  assert.ok(composerHolds("[Pasted text #1 +12 lines]", "a\nb"));
  assert.ok(composerHolds("[Pasted ~3 lines]", "a\nb\nc"));
  assert.ok(!composerHolds("[Pasted ~3 lines", "a\nb\nc"));
});
