import assert from "node:assert/strict";
import { classifyScreen } from "./classify.ts";
import { checkFixtureMatrix, type MatrixRow } from "./_fixture_matrix.ts";
import { GEMINI_SCREEN, geminiActivity, geminiComposer } from "./gemini_screen.ts";

const FIXTURES = new URL("../../tests/fixtures/gemini/", import.meta.url);

/**
 * Every captured screen of Gemini CLI 0.61.0 → rule, state, message part and
 * what the input holds; each once with COLORTERM=truecolor (framed input) and
 * once without (`_plain`).
 */
const MATRIX: MatrixRow[] = [
  ["idle_startup", "starting", "unknown_running", null, ""],
  ["composer_text", "starting", "unknown_running", null, "draft text that is not submitted"],
  ["finished", "idle_prompt", "idle", null, ""],
  ["finished_chunks", "idle_prompt", "idle", null, ""],
  ["busy", "busy", "thinking", null, ""],
  ["interrupted", "interrupted", "waiting_for_input", "Request cancelled", ""],
  [
    "permission_shell",
    "permission_dialog",
    "waiting_for_input",
    "Shell: echo hi > f.txt — Allow execution of [Shell]?",
    null,
  ],
  ["permission_approved", "idle_prompt", "idle", null, ""],
  ["permission_refused", "interrupted", "waiting_for_input", "Request cancelled", ""],
  ["api_error_400", "api_error", "errored", "mock failure 400", ""],
  ["exit_prompt", "exit_prompt", "idle", null, ""],
  ["exited", null, null, null, null],
];

Deno.test("every Gemini CLI fixture classifies as captured, with and without truecolor", async (t) => {
  const rows = MATRIX.flatMap((m): MatrixRow[] => [m, [`${m[0]}_plain`, m[1], m[2], m[3], m[4]]]);
  await checkFixtureMatrix(t, FIXTURES, GEMINI_SCREEN, geminiComposer, rows);
});

Deno.test("the spinner is not activity", () => {
  const busy = Deno.readTextFileSync(new URL("busy.txt", FIXTURES)).split("\n");
  const later = busy.map((l) =>
    l.replace(/⠋ Thinking\.\.\. \(esc to cancel, 0s\)/, "⠼ Thinking... (esc to cancel, 4s)")
  );
  assert.notDeepEqual(busy, later);
  assert.equal(geminiActivity(busy), geminiActivity(later));
});

Deno.test("a busy line naming only paneflow's AfterAgent hook is the end of the turn, other hooks are busy", () => {
  const busy = Deno.readTextFileSync(new URL("busy.txt", FIXTURES));
  const after = busy.replace(
    /⠋ Thinking\.\.\. \(esc to cancel, 0s\)/,
    "⠋ Executing Hooks: paneflow-AfterAgent (esc to cancel, 0s)",
  );
  assert.equal(classifyScreen(GEMINI_SCREEN, after)?.rule, "hooks_after_turn");
  assert.equal(classifyScreen(GEMINI_SCREEN, after)?.state, "idle");
  const before = busy.replace(
    /⠋ Thinking\.\.\. \(esc to cancel, 0s\)/,
    "⠋ Executing Hooks: paneflow-BeforeAgent (esc to cancel, 0s)",
  );
  assert.equal(classifyScreen(GEMINI_SCREEN, before)?.rule, "busy");
});
