import assert from "node:assert/strict";
import { ClaudeCodePlugin, fnv1aHex } from "./claude_code.ts";
import { COMPLETED_TURN_STABLE_MS, splitStatusBar } from "./types.ts";

const FIXTURES = new URL("../../tests/fixtures/claude/", import.meta.url);
const screen = (name: string) => Deno.readTextFileSync(new URL(`${name}.txt`, FIXTURES)).replace(/\n$/, "");

function classify(
  p: ClaudeCodePlugin,
  name: string,
  extra: Record<string, unknown> = {},
  edit = (s: string) => s,
  // deno-lint-ignore no-explicit-any
): any {
  const s = edit(screen(name));
  const { body, status } = splitStatusBar(s);
  return p.call("classify", {
    screen: s,
    body_text: body,
    status_text: status,
    transcript: "",
    sequence: 7,
    completed_turn_stable_ms: COMPLETED_TURN_STABLE_MS,
    markers: {},
    cursor: 0,
    ...extra,
  });
}

Deno.test("claude-code classifies every captured Claude Code 2.1.328 screen", () => {
  const p = new ClaudeCodePlugin();
  const cases: [string, string, string][] = [
    ["idle_startup", "waiting_for_user_input", "input prompt glyph detected"],
    ["busy", "thinking", "active work indicator detected"],
    ["busy_streaming", "thinking", "active work indicator detected"],
    ["busy_draft", "thinking", "active work indicator detected"],
    ["queued", "thinking", "active work indicator detected"],
    ["finished", "waiting_for_user_input", "input prompt glyph detected"],
    ["interrupted", "waiting_for_user_input", "input prompt glyph detected"],
    ["api_error_500", "error", "visible error banner detected"],
    ["api_error_529", "error", "visible error banner detected"],
    ["permission_bash", "waiting_for_permission", "permission or approval prompt text detected"],
    ["exit_prompt", "waiting_for_user_input", "input prompt glyph detected"],
  ];
  for (const [name, state, evidence] of cases) {
    const st = classify(p, name);
    assert.equal(st.state, state, name);
    assert.equal(st.evidence, evidence, name);
    assert.equal(st.sequence, 7);
  }
  const perm = classify(p, "permission_bash");
  assert.deepEqual(perm.metadata.permission.tool, "Bash");
  assert.equal(perm.metadata.permission.summary, "touch paneflow-marker.txt");
  assert.equal(perm.metadata.permission.options.length, 4);
  assert.equal(perm.metadata.permission.options[3], "No");
  assert.match(perm.metadata.dialog_id, /^[0-9a-f]{8}$/);
  assert.equal(perm.confidence, 0.84);
  assert.deepEqual(classify(p, "api_error_529").metadata.error.kind, "api");
  assert.deepEqual(classify(p, "idle_startup").metadata.status, {
    model: "Opus 5.5",
    permission_mode: "manual mode",
  });
});

Deno.test("claude-code: completed_turn with the turn's text once the submitted prompt's turn ends", () => {
  const p = new ClaudeCodePlugin();
  p.call("send_prompt", { prompt: "hello" });
  const marker = classify(p, "finished", {
    last_intent: "prompt_submitted",
    markers: { turn_start: 10 },
    cursor: 99,
  });
  assert.equal(marker.state, "completed_turn");
  assert.equal(marker.evidence, "completion marker plus input prompt visible without active work");
  assert.equal(marker.confidence, 0.7);
  assert.equal(marker.metadata.turn.text, "Hello from the mock API.");
  assert.deepEqual(marker.host_marks, [{ label: "turn_end" }]);
  const stable = classify(p, "finished", { last_intent: "prompt_submitted", stable_ms: 400 });
  assert.equal(stable.evidence, "stable input prompt after prompt submission");
  assert.equal(stable.confidence, 0.78);
  // Another prompt in flight: the old turn on screen is not its completion.
  p.call("send_prompt", { prompt: "something else" });
  const inflight = classify(p, "finished", { last_intent: "prompt_submitted" });
  assert.equal(inflight.state, "thinking");
  assert.equal(inflight.evidence, "turn in flight; no accepted completion marker on screen");
});

Deno.test("claude-code intents return ptywright's exact action plans", () => {
  const p = new ClaudeCodePlugin();
  const k = (value: string) => ({ type: "key", value });
  assert.deepEqual(p.call("send_prompt", { prompt: "hi" }), {
    actions: [
      k("enter"),
      { type: "mark_transcript", value: { label: "turn_start" } },
      { type: "stream_text", value: { text: "hi" } },
      k("enter"),
      k("enter"),
    ],
    last_intent: "prompt_submitted",
  });
  assert.deepEqual(p.call("send_prompt", {}), { actions: [], last_intent: "" });
  assert.deepEqual(p.call("steer", { prompt: "x" }), {
    actions: [{ type: "bracketed_paste", value: "x" }, k("enter")],
  });
  assert.deepEqual(p.call("slash_command", { name: "usage" }), {
    actions: [{ type: "stream_text", value: { text: "/usage" } }, k("enter")],
  });
  assert.deepEqual(p.call("approve", {}), { actions: [k("enter")] });
  assert.deepEqual(p.call("deny", {}), { actions: [k("escape")] });
  assert.deepEqual(p.call("approve_trust", {}), { actions: [{ type: "text", value: "1" }, k("enter")] });
  assert.deepEqual(p.call("deny_trust", {}), { actions: [{ type: "text", value: "2" }, k("enter")] });
  assert.deepEqual(p.call("dismiss_welcome", {}), { actions: [k("enter")] });
  assert.deepEqual(p.call("expand", {}), { actions: [k("ctrl_o")] });
  assert.deepEqual(p.call("model_effort_left", {}), { actions: [k("left")] });
  assert.deepEqual(p.call("model_effort_right", {}), { actions: [k("right")] });
  assert.deepEqual(p.call("cancel", {}), { actions: [k("escape")], last_intent: "cancelling" });
  assert.deepEqual(p.call("force_cancel", {}), {
    actions: [k("escape"), k("escape")],
    last_intent: "cancelling",
  });
  assert.deepEqual(p.call("key", { key: "page-up" }), { actions: [k("page_up")] });
  assert.deepEqual(p.call("key", { key: "y" }), { actions: [{ type: "text", value: "y" }] });
  assert.deepEqual(p.call("attach_file", { path: "a.png" }), {
    actions: [{ type: "bracketed_paste", value: "a.png" }],
  });
  assert.throws(() => p.call("attach_file", { path: "" }), /path is required/);
  assert.throws(() => p.call("attach_file", { path: "a\nb" }), /must not contain newlines/);
  // stale_dialog: an id that is not the current dialog's.
  classify(p, "permission_bash");
  assert.throws(() => p.call("approve", { dialog_id: "00000000" }), /stale_dialog/);
  assert.deepEqual(p.call("choose_option", { option: "no" }), {
    actions: [{ type: "text", value: "4" }, k("enter")],
  });
  assert.throws(() => p.call("choose_option", { index: 9 }), /outside the current option range/);
  assert.equal(fnv1aHex(""), "811c9dc5");
  type Named = { name: string }[];
  const d = p.call("describe", {}) as { intents: Named; wait_matchers: Named; states: Named };
  assert.equal(d.intents.length, 16);
  assert.equal(d.states.length, 16);
  // Every intent and matcher `describe()` names is exported (and the list is sorted).
  for (const { name } of [...d.intents, ...d.wait_matchers]) assert.ok(p.exports.includes(name), name);
  assert.deepEqual(p.exports, [...p.exports].sort());
  assert.equal(p.exports.length, 22);
  assert.throws(() => p.call("toString", {}), /no exported function `toString`/);
});

Deno.test("claude-code: a cancel before any answer settles at the input, not at an older turn's error", () => {
  const p = new ClaudeCodePlugin();
  p.call("send_prompt", { prompt: "hold on" });
  p.call("cancel", {});
  // Claude Code 2.1.328 takes the prompt off the transcript and puts it back in the input box
  // (interrupted_before_output.txt), so the last turn on screen is the one that hit the 500.
  const back = (s: string) =>
    s.replace("❯\u00a0Resend your message to try again", "❯\u00a0hold on").replace(" · ? for shortcuts", "");
  const extra = { last_intent: "cancelling", stable_ms: COMPLETED_TURN_STABLE_MS };
  const st = classify(p, "api_error_500", extra, back);
  assert.equal(st.state, "waiting_for_user_input", JSON.stringify(st));
  // The cancelled turn's own error still counts.
  p.call("send_prompt", { prompt: "trigger api_error_500" });
  p.call("cancel", {});
  assert.equal(classify(p, "api_error_500", extra).state, "error");
});

Deno.test("claude-code: a cancel settles on `adapter.state` (no stable_ms) once the screen shows the turn unwound", () => {
  const p = new ClaudeCodePlugin();
  const cancelling = { last_intent: "cancelling" };
  // Interrupted after part of the answer: the `Interrupted` line in the prompt's turn.
  p.call("send_prompt", { prompt: "start and get interrupted" });
  p.call("cancel", {});
  assert.equal(classify(p, "busy", cancelling).state, "cancelling");
  // The spinner is gone but the turn has not unwound yet (no `Interrupted`, prompt not put back).
  const idle = classify(p, "idle_startup", cancelling);
  assert.equal(idle.state, "cancelling", JSON.stringify(idle));
  assert.equal(idle.evidence, "cancel intent recently applied; waiting for the screen to settle");
  const st = classify(p, "interrupted", cancelling);
  assert.equal(st.state, "waiting_for_user_input", JSON.stringify(st));
  assert.equal(st.evidence, "input prompt glyph detected");
  assert.equal(st.confidence, 0.62);
  // Settled stays settled until the next prompt.
  assert.equal(classify(p, "idle_startup", cancelling).state, "waiting_for_user_input");

  // Cancelled before any answer: the prompt is put back in the input box.
  p.call("send_prompt", { prompt: "wait for the held reply" });
  p.call("cancel", {});
  assert.equal(classify(p, "idle_startup", cancelling).state, "cancelling");
  assert.equal(classify(p, "interrupted_before_output", cancelling).state, "waiting_for_user_input");
});

Deno.test("claude-code: after a cancel, wait_turn_matcher's turn_settled fires on the unwound turn", () => {
  const p = new ClaudeCodePlugin();
  p.call("send_prompt", { prompt: "wait for the held reply" });
  // deno-lint-ignore no-explicit-any
  const predicateParams = () => (p.call("wait_turn_matcher", {}) as any).value[0].value[0].value.params;
  assert.equal(predicateParams().cancelled, undefined);
  const settled = (name: string) =>
    p.call("turn_settled", { screen: screen(name), params: predicateParams() });
  // Without a cancel, a prompt back in the input box is not this turn's end.
  assert.equal(settled("interrupted_before_output"), false);
  p.call("cancel", {});
  assert.equal(predicateParams().cancelled, true);
  assert.deepEqual(settled("interrupted_before_output"), {
    matched: true,
    evidence: "prompt put back in the input box",
  });
  assert.equal(settled("busy"), false);
  // The next prompt clears it.
  p.call("send_prompt", { prompt: "next" });
  assert.equal(predicateParams().cancelled, undefined);
});
