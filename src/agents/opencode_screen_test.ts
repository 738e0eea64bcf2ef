import assert from "node:assert/strict";
import { classifyScreen } from "./classify.ts";
import { checkFixtureMatrix, type MatrixRow } from "./_fixture_matrix.ts";
import { OPENCODE_SCREEN, opencodeActivity, opencodeComposer, opencodeRegions } from "./opencode_screen.ts";

const FIXTURES = new URL("../../tests/fixtures/opencode/", import.meta.url);

/** Every captured screen of opencode 1.18.33 → rule, state, message part, and what the input holds. */
const MATRIX: MatrixRow[] = [
  ["idle_startup", "idle_prompt", "idle", null, ""],
  ["composer_text", "idle_prompt", "idle", null, "draft text that is not submitted"],
  ["finished", "done", "idle", null, ""],
  ["composer_session", "done", "idle", null, "draft after a turn"],
  ["busy", "busy", "thinking", null, ""],
  // One Esc asks for a second one: still busy.
  ["busy_esc_once", "busy", "thinking", null, ""],
  ["interrupted", "interrupted", "waiting_for_input", "Interrupted", ""],
  [
    "permission_shell",
    "permission_dialog",
    "waiting_for_input",
    "Shell command: echo hi > f.txt — Permission required",
    null,
  ],
  ["permission_approved", "done", "idle", null, ""],
  // Esc in the dialog rejects: the turn stops (a footer without a duration), no error block.
  ["permission_refused", "interrupted", "waiting_for_input", "rejected permission", ""],
  ["api_error_400", "api_error", "errored", "mock failure 400", ""],
  ["exited", null, null, null, null],
];

const read = (file: string) => Deno.readTextFileSync(new URL(`${file}.txt`, FIXTURES));

Deno.test("every opencode fixture classifies as captured", async (t) => {
  await checkFixtureMatrix(t, FIXTURES, OPENCODE_SCREEN, opencodeComposer, MATRIX);
});

Deno.test("the last turn starts at its prompt, without the sidebar", () => {
  const turn = (f: string) => opencodeRegions(read(f).split("\n")).last_turn[0]?.trim();
  assert.equal(turn("finished"), "┃  ECHO hello from opencode");
  assert.equal(turn("api_error_400"), "┃  FAIL 400");
  assert.equal(turn("permission_shell"), "┃  RUN echo hi > f.txt");
  assert.equal(turn("idle_startup"), undefined);
});

Deno.test("an old interrupted or failed turn does not count once a new turn finished", () => {
  const screen = read("permission_approved");
  assert.match(screen, /· interrupted/);
  assert.equal(classifyScreen(OPENCODE_SCREEN, screen)?.rule, "done");
});

Deno.test("the sidebar's counters are not activity; new transcript lines are", () => {
  const busy = read("busy").split("\n");
  const later = busy.map((l) => l.replace(/\b15 tokens/, "99 tokens").replace(/⬝/g, "■"));
  assert.equal(opencodeActivity(busy), opencodeActivity(later));
  const more = [...busy];
  more[3] = "     new output";
  assert.notEqual(opencodeActivity(busy), opencodeActivity(more));
});

Deno.test("a turn whose footer has no duration yet while the bar runs is busy, not stopped", () => {
  const lines = read("busy").split("\n");
  assert.ok(lines.some((l) => /▣ {2}Build · Mock\s*$/.test(l.slice(0, 150))));
  assert.equal(classifyScreen(OPENCODE_SCREEN, lines.join("\n"))?.rule, "busy");
});
