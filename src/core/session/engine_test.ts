import assert from "node:assert/strict";
import { XtermEngine } from "../pane/xterm_engine.ts";
import {
  openSession,
  sessionCall,
  sessionDisposed,
  sessionOutput,
  sessionResized,
  startWait,
} from "./engine.ts";
import type { SessionEvent } from "./worker_api.ts";

/** The session side posts to the worker's scope: here, the test's. */
function capture(): { events: SessionEvent[]; restore(): void } {
  const scope = globalThis as unknown as { postMessage?: (m: unknown) => void };
  const before = scope.postMessage;
  const events: SessionEvent[] = [];
  scope.postMessage = (m) => events.push(m as SessionEvent);
  return { events, restore: () => (scope.postMessage = before) };
}

const spawn = { transcript_max_chars: 1000, raw_path: null, pixel_width: 0, pixel_height: 0 };
const text = (s: string) => new TextEncoder().encode(s);

Deno.test("session worker: a reply never overtakes the report of output it reflects", () => {
  const { events, restore } = capture();
  const term = new XtermEngine({ cols: 80, rows: 24, scrollback: 1000 });
  try {
    openSession(901, term, spawn);
    // A change right before the output (a resize at spawn): the output's report is then put off
    // to the end of the turn (checks within 2 ms of the last wait for it).
    sessionResized(901);
    sessionOutput(901, text("before-sub\n"));
    // The main thread seeds notification cursors from the reports: once it has a transcript
    // reply, the report of every character in it must be there already.
    const reply = sessionCall(901, { kind: "transcript" }) as { text: string };
    assert.equal(reply.text, "before-sub\n");
    const last = events.filter((e) => e.ev === "session").at(-1);
    assert.equal(last?.chars, reply.text.length);
    // The same for a wait answered at once.
    sessionOutput(901, text("more\n"));
    let outcome: unknown = null;
    startWait(
      901,
      { kind: "wait", wid: 1, matcher: { type: "transcript_contains", value: "more" }, timeout_ms: 1000 },
      (o) => (outcome = o),
    );
    assert.ok(outcome && (outcome as { ok: boolean }).ok);
    assert.equal(events.filter((e) => e.ev === "session").at(-1)?.chars, "before-sub\nmore\n".length);
  } finally {
    sessionDisposed(901);
    term.dispose();
    restore();
  }
});
