import assert from "node:assert/strict";
import { checkFixtureMatrix, type MatrixRow } from "./_fixture_matrix.ts";
import { classifyScreen } from "./classify.ts";
import { COPILOT_SCREEN, copilotComposer } from "./copilot_screen.ts";
import { detectFamily } from "./detect.ts";

const FIXTURES = new URL("../../tests/fixtures/copilot/", import.meta.url);

/** Every captured screen of GitHub Copilot CLI 1.0.102 → rule, state, message part and the input's text. */
const MATRIX: MatrixRow[] = [
  ["idle_startup", "idle_prompt", "idle", null, ""],
  ["composer_text", "idle_prompt", "idle", null, "draft text that is not submitted"],
  ["finished", "idle_prompt", "idle", null, ""],
  ["busy", "busy", "thinking", null, ""],
  ["interrupted", "interrupted", "waiting_for_input", "Operation cancelled by user", ""],
  [
    "permission_shell",
    "permission_dialog",
    "waiting_for_input",
    "echo hi > f.txt — Do you want to run this command?",
    null,
  ],
  ["permission_approved", "idle_prompt", "idle", null, ""],
  ["api_error_400", "api_error", "errored", "mock failure 400", ""],
  ["exit_prompt", "exit_prompt", "idle", null, ""],
  ["exited", null, null, null, null],
];

Deno.test("every Copilot CLI fixture classifies as captured", async (t) => {
  await checkFixtureMatrix(t, FIXTURES, COPILOT_SCREEN, copilotComposer, MATRIX);
});

Deno.test("the Copilot CLI permission box lists its options", () => {
  const screen = Deno.readTextFileSync(new URL("permission_shell.txt", FIXTURES));
  assert.deepEqual(classifyScreen(COPILOT_SCREEN, screen)?.dialog?.options, [
    "Yes",
    "No, and tell Copilot what to do differently (Esc to stop)",
  ]);
});

Deno.test("Copilot CLI and Qwen Code processes are detected as seen in panes", () => {
  const c = "/c/node_modules";
  assert.equal(detectFamily(["node", `${c}/.bin/copilot`]), "copilot");
  assert.equal(detectFamily([`${c}/@github/copilot-linux-x64/copilot`]), "copilot");
  const q = "/q/node_modules";
  assert.equal(detectFamily(["node", `${q}/.bin/qwen`]), "qwen");
  assert.equal(detectFamily(["node", "--expose-gc", `${q}/@qwen-code/qwen-code/cli.js`]), "qwen");
  assert.equal(detectFamily(["copilot-language-server"]), null);
});
