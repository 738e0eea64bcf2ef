/**
 * Claude Code's screen states, as data. Captured from the real CLI
 * (fixtures in tests/fixtures/claude/, one per state); when Claude Code
 * changes its UI text, this file is the fix.
 *
 * Order matters: the first matching rule wins, so dialogs come before the
 * busy line (a dialog can show over a busy turn) and the busy line before
 * the idle prompt.
 *
 * @module
 */
import type { ScreenRules } from "./classify.ts";

/** Lines of a permission dialog: the tool box title down to the question. */
function dialogQuestion(lines: string[]): string | null {
  const q = lines.findLastIndex((l) => /Do you want to /.test(l));
  if (q < 0) return null;
  const question = lines[q].replace(/[│╭╮╰╯─]/g, "").trim();
  // The command or file the dialog is about sits a few lines above the question.
  const above = lines.slice(Math.max(0, q - 8), q)
    .map((l) => l.replace(/[│╭╮╰╯─]/g, "").trim())
    .filter(Boolean);
  const detail = above.slice(-3).join(" · ");
  return detail ? `${question} (${detail})` : question;
}

function lastMatching(re: RegExp) {
  return (lines: string[]) => {
    const line = lines.findLast((l) => re.test(l));
    return line ? line.replace(/^[\s⎿│>●]+/, "").replace(/[│\s]+$/, "").trim() : null;
  };
}

/** Claude Code screen rules. */
export const CLAUDE_SCREEN: ScreenRules = {
  family: "claude",
  version: "2.1.328",
  rules: [
    {
      id: "permission_dialog",
      state: "waiting_for_input",
      pattern: /Do you want to (proceed|make this edit|create|allow|run)[^\n]*\?[\s\S]*1\.\s*Yes/,
      message: dialogQuestion,
      note: "a permission dialog asks the user to approve a tool call",
    },
    {
      id: "busy",
      state: "thinking",
      pattern: /esc to interrupt/i,
      within: 12,
      note: "the status line says `esc to interrupt` while a turn runs",
    },
    {
      id: "interrupted",
      state: "waiting_for_input",
      pattern: /Interrupted[^\n]*What should Claude do instead\?/,
      within: 12,
      message: lastMatching(/Interrupted/),
      note: "the turn was interrupted (Esc or a refused dialog); no hook fires for this",
    },
    {
      id: "api_error",
      state: "errored",
      pattern: /API Error|Request timed out|overloaded_error|Credit balance/i,
      within: 12,
      message: lastMatching(/API Error|Request timed out|overloaded|Credit balance/i),
      note: "the last turn ended with an API error",
    },
    {
      id: "exit_prompt",
      state: "idle",
      pattern: /Press Ctrl-C again to exit|Press Ctrl-D again to exit/i,
      within: 6,
      note: "Claude Code asks for a second Ctrl-C before it exits",
    },
    {
      id: "idle_prompt",
      state: "idle",
      pattern: /^[\s│]*>\s|\? for shortcuts/m,
      within: 8,
      note: "the input box is shown with no busy line: the agent waits for a prompt",
    },
  ],
};
