import assert from "node:assert/strict";
import { classifyScreen } from "./classify.ts";
import { checkFixtureMatrix, type MatrixRow } from "./_fixture_matrix.ts";
import { CODEX_SCREEN, codexActivity, codexComposer } from "./codex_screen.ts";

const FIXTURES = new URL("../../tests/fixtures/codex/", import.meta.url);

/** Every captured screen of Codex CLI 0.169.0 → rule, state, message part, and what the input holds. */
const MATRIX: MatrixRow[] = [
  ["idle_startup", "idle_prompt", "idle", null, ""],
  ["composer_text", "idle_input", "idle", null, "draft text that is not submitted"],
  ["finished", "idle_prompt", "idle", null, ""],
  ["busy", "busy", "thinking", null, ""],
  ["busy_waiting", "busy", "thinking", null, ""],
  // A draft typed while a turn runs: the footer offers to queue it.
  ["busy_draft", "busy", "thinking", null, "a draft typed while busy"],
  ["interrupted", "interrupted", "waiting_for_input", "Conversation interrupted", ""],
  [
    "permission_exec",
    "permission_dialog",
    "waiting_for_input",
    "Run: echo hi > f.txt — Would you like to run",
    null,
  ],
  ["permission_approved", "idle_prompt", "idle", null, ""],
  // Esc in the dialog: `✗ You canceled …` and an interrupted conversation, no hook.
  ["permission_refused", "interrupted", "waiting_for_input", "Conversation interrupted", ""],
  ["api_error_400", "api_error", "errored", "mock failure 400", ""],
  ["api_error_500", "api_error", "errored", "high demand", ""],
  ["hooks_review", "trust_dialog", "waiting_for_input", "never trusts hooks on your behalf", null],
  ["exited", null, null, null, null],
];

Deno.test("every Codex fixture classifies as captured", async (t) => {
  await checkFixtureMatrix(t, FIXTURES, CODEX_SCREEN, codexComposer, MATRIX);
});

Deno.test("an old interrupted or failed turn does not count once a new turn finished", () => {
  const screen = Deno.readTextFileSync(new URL("permission_approved.txt", FIXTURES));
  // The fixture has an interrupted HOLD turn above the approved one.
  assert.match(screen, /Conversation interrupted/);
  assert.equal(classifyScreen(CODEX_SCREEN, screen)?.rule, "idle_prompt");
});

Deno.test("the Working timer is not activity; new transcript lines are", () => {
  const busy = Deno.readTextFileSync(new URL("busy.txt", FIXTURES)).split("\n");
  const later = busy.map((l) => l.replace(/Working \(\d+s/, "Working (7s"));
  assert.equal(codexActivity(busy), codexActivity(later));
  const more = [...busy];
  more[3] = "• new output";
  assert.notEqual(codexActivity(busy), codexActivity(more));
});

Deno.test("a reply streaming without its Working line is still a running turn", () => {
  const lines = Deno.readTextFileSync(new URL("finished.txt", FIXTURES)).split("\n")
    .filter((l) => !/Worked for/.test(l));
  assert.equal(classifyScreen(CODEX_SCREEN, lines.join("\n"))?.rule, "busy_unfinished");
});
