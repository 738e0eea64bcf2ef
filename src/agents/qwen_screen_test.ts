import assert from "node:assert/strict";
import { checkFixtureMatrix, type MatrixRow } from "./_fixture_matrix.ts";
import { classifyScreen } from "./classify.ts";
import { QWEN_SCREEN, qwenActivity, qwenComposer } from "./qwen_screen.ts";

const FIXTURES = new URL("../../tests/fixtures/qwen/", import.meta.url);

/** Every captured screen of Qwen Code 0.24.4 → rule, state, message part and what the input holds. */
const MATRIX: MatrixRow[] = [
  ["idle_startup", "idle_prompt", "idle", null, ""],
  ["composer_text", "idle_prompt", "idle", null, "draft text that is not submitted"],
  ["finished", "idle_prompt", "idle", null, ""],
  ["busy", "busy", "thinking", null, ""],
  // An Esc before any reply text puts the prompt back into the input; nothing says "cancelled".
  ["interrupted", "idle_prompt", "idle", null, "HOLD"],
  // Read through `surface.read` by tests/agents_qwen_test.ts: an Esc after a tool turn.
  ["interrupted_after_tool", "interrupted", "waiting_for_input", "Request cancelled", ""],
  [
    "permission_shell",
    "permission_dialog",
    "waiting_for_input",
    "Shell: echo hi > f.txt — Allow execution of: 'echo'?",
    null,
  ],
  ["permission_approved", "idle_prompt", "idle", null, ""],
  ["permission_refused", "refused", "waiting_for_input", "Refused: Shell echo nope > n.txt", ""],
  ["api_error_400", "api_error", "errored", "mock failure 400", ""],
  ["exit_prompt", "exit_prompt", "idle", null, ""],
  ["exited", null, null, null, null],
];

Deno.test("every Qwen Code fixture classifies as captured", async (t) => {
  await checkFixtureMatrix(t, FIXTURES, QWEN_SCREEN, qwenComposer, MATRIX);
});

Deno.test("the Qwen Code spinner is not activity", () => {
  const busy = Deno.readTextFileSync(new URL("busy.txt", FIXTURES)).split("\n");
  const later = busy.map((l) => l.replace(/\(0s · esc to cancel\)/, "(4s · esc to cancel)"));
  assert.notDeepEqual(busy, later);
  assert.equal(qwenActivity(busy), qwenActivity(later));
});

Deno.test("the Qwen Code permission dialog lists its options", () => {
  const screen = Deno.readTextFileSync(new URL("permission_shell.txt", FIXTURES));
  const v = classifyScreen(QWEN_SCREEN, screen);
  assert.deepEqual(v?.dialog?.options, [
    "Yes, allow once",
    "Always allow run 'echo *' commands in this project",
    "Always allow run 'echo *' commands for this user",
    "No, suggest changes (esc)",
  ]);
});
