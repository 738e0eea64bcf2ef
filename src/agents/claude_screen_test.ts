import assert from "node:assert/strict";
import { classifyScreen } from "./classify.ts";
import { CLAUDE_SCREEN, claudeActivity, claudeComposer } from "./claude_screen.ts";

const FIXTURES = new URL("../../tests/fixtures/claude/", import.meta.url);

/** Every captured screen of Claude Code 2.1.328 → rule, state, and what the input box holds. */
const MATRIX: [file: string, rule: string | null, state: string | null, composer: string | null][] = [
  ["idle_startup", "idle_prompt", "idle", ""],
  ["composer_text", "idle_input", "idle", "draft text that is not submitted"],
  ["composer_slash_exit", "idle_input", "idle", "/exit"],
  ["busy", "busy", "thinking", ""],
  ["busy_streaming", "busy", "thinking", ""],
  // A draft typed during a turn hides `esc to interrupt`; the spinner line says busy.
  ["busy_draft", "busy_spinner", "thinking", "a draft typed while busy"],
  // ...and after some output, when no spinner line shows: output without a `· done` line yet.
  ["busy_output_draft", "busy_unfinished", "thinking", "a draft typed while answering"],
  ["finished_draft", "idle_input", "idle", "a draft after the turn"],
  ["queued", "busy", "thinking", "Press up to edit queued messages"],
  ["finished", "idle_prompt", "idle", ""],
  ["permission_bash", "permission_dialog", "waiting_for_input", null],
  ["permission_approved", "idle_prompt", "idle", ""],
  ["permission_refused_esc", "interrupted", "waiting_for_input", ""],
  ["permission_refused_no", "interrupted", "waiting_for_input", ""],
  ["interrupted", "interrupted", "waiting_for_input", ""],
  ["interrupted_ctrl_c", "interrupted", "waiting_for_input", ""],
  // Interrupted before any output: Claude Code puts the prompt back in the input box.
  ["interrupted_before_output", "idle_input", "idle", "wait for the held reply"],
  ["api_error_500", "api_error", "errored", "Resend your message to try again"],
  ["api_error_529", "api_error", "errored", "Resend your message to try again"],
  ["api_error_stream", "api_error", "errored", "Resend your message to try again"],
  ["exit_prompt", "exit_prompt", "idle", ""],
  ["exited_ctrl_c", null, null, null],
  ["exited_slash_exit", null, null, null],
];

Deno.test("every Claude Code fixture classifies as captured", async (t) => {
  const files = [...Deno.readDirSync(FIXTURES)].map((e) => e.name).filter((n) => n.endsWith(".txt"));
  assert.deepEqual(
    files.map((f) => f.slice(0, -4)).sort(),
    MATRIX.map((m) => m[0]).sort(),
    "one row per fixture",
  );
  for (const [file, rule, state, composer] of MATRIX) {
    await t.step(file, () => {
      const screen = Deno.readTextFileSync(new URL(`${file}.txt`, FIXTURES));
      const verdict = classifyScreen(CLAUDE_SCREEN, screen);
      assert.equal(verdict?.rule ?? null, rule);
      assert.equal(verdict?.state ?? null, state);
      assert.equal(claudeComposer(screen.split("\n")), composer);
    });
  }
});

Deno.test("a permission dialog's message names the tool, the command and the question", () => {
  const screen = Deno.readTextFileSync(new URL("permission_bash.txt", FIXTURES));
  const verdict = classifyScreen(CLAUDE_SCREEN, screen);
  assert.equal(verdict?.message, "Bash command: touch paneflow-marker.txt — Do you want to proceed?");
});

Deno.test("an Interrupted line from an earlier turn does not count once a new turn runs", () => {
  const screen = Deno.readTextFileSync(new URL("busy.txt", FIXTURES));
  const old = screen.replace("❯ ", "❯ older\n  ⎿  Interrupted · What should Claude do instead?\n❯ ");
  assert.equal(classifyScreen(CLAUDE_SCREEN, old)?.rule, "busy");
});

Deno.test("a spinner redrawing is not activity; new transcript text is", () => {
  const screen = Deno.readTextFileSync(new URL("busy.txt", FIXTURES)).split("\n");
  const spin = screen.findIndex((l) => /…/.test(l) && /^[✻✽✢✶✳·*] /.test(l.trim()));
  assert.ok(spin >= 0, "busy.txt has a spinner line");
  const redrawn = [...screen];
  redrawn[spin] = redrawn[spin].replace(/\(\d+s/, "(59s").replace(/^(\s*)\S/, "$1✶");
  assert.equal(claudeActivity(redrawn), claudeActivity(screen));
  const more = [...screen];
  more.splice(spin, 0, "● a new line of the answer");
  assert.notEqual(claudeActivity(more), claudeActivity(screen));
});
