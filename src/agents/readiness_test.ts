import assert from "node:assert/strict";
import {
  agentReady,
  agentWorking,
  dialogShown,
  paneIdle,
  prefillSettled,
  readyForPrompt,
  turnEnded,
} from "./readiness.ts";

Deno.test("readiness: agent states", () => {
  assert.equal(agentWorking("thinking"), true);
  assert.equal(agentWorking("stalled"), true);
  assert.equal(agentWorking("idle"), false);
  assert.equal(agentWorking(null), false);
  for (const s of ["idle", "finished", "waiting_for_input"]) assert.equal(agentReady(s), true, s);
  for (const s of ["thinking", "stalled", "errored", "unknown_running"]) {
    assert.equal(agentReady(s), false, s);
  }
  assert.equal(turnEnded("finished"), true);
  assert.equal(turnEnded("idle"), true);
  assert.equal(turnEnded("waiting_for_input"), false);
});

Deno.test("readiness: dialogs hold the input; the trust dialog only when asked", () => {
  assert.equal(dialogShown("permission_dialog"), true);
  assert.equal(dialogShown("trust_dialog"), false);
  assert.equal(dialogShown("trust_dialog", { trust: true }), true);
  assert.equal(dialogShown("idle_prompt", { trust: true }), false);
  assert.equal(dialogShown(undefined), false);
});

Deno.test("readiness: wait --idle and a flow's prompt", () => {
  // An agent: its state decides; quiet output does not matter.
  assert.deepEqual(paneIdle({ tool: "claude", state: "thinking", idle_ms: 99_999 }, 1500), {
    agent: true,
    idle: false,
  });
  assert.deepEqual(paneIdle({ tool: "claude", state: "errored", idle_ms: 0 }, 1500), {
    agent: true,
    idle: true,
  });
  // An agent in an unknown state, or no agent: output quiescence decides.
  assert.deepEqual(paneIdle({ tool: "claude", state: "unknown_running", idle_ms: 1499 }, 1500), {
    agent: false,
    idle: false,
  });
  assert.deepEqual(paneIdle({ tool: null, state: "idle", idle_ms: 1500 }, 1500), {
    agent: false,
    idle: true,
  });
  assert.equal(readyForPrompt({ tool: "codex", state: "waiting_for_input", idle_ms: 0 }, 800), true);
  assert.equal(readyForPrompt({ tool: "codex", state: "errored", idle_ms: 99_999 }, 800), false);
  assert.equal(readyForPrompt({ tool: null, state: "idle", idle_ms: 799 }, 800), false);
  assert.equal(readyForPrompt({ tool: null, state: "idle", idle_ms: 800 }, 800), true);
});

Deno.test("readiness: the prefill waits for settled output, silence or a read of the terminal", () => {
  let asked = 0;
  const reading = (v: boolean) => () => (asked++, v);
  const base = { launched: 0, lastOutputAt: 1000 };
  assert.equal(prefillSettled({ ...base, now: 1499, printed: true, reading: reading(true) }), false);
  assert.equal(prefillSettled({ ...base, now: 1500, printed: true, reading: reading(false) }), true);
  assert.equal(asked, 0, "a program that printed is not asked about its terminal");
  assert.equal(prefillSettled({ ...base, now: 100, printed: false, reading: reading(false) }), false);
  assert.equal(prefillSettled({ ...base, now: 100, printed: false, reading: reading(true) }), true);
  assert.equal(prefillSettled({ ...base, now: 3000, printed: false, reading: reading(false) }), true);
});
