/**
 * GitHub Copilot CLI's screen states, as data. Captured from the real Copilot
 * CLI 1.0.102 (fixtures in tests/fixtures/copilot/; see
 * scripts/agents_capture_more.ts); when Copilot CLI changes its UI text, this
 * file is the fix.
 *
 * Copilot CLI renders inline. From the bottom up: a footer (` ← open sidebar ·
 * Interactive · Manual Approval · / commands …`; ` ◉ Working esc esc edit
 * prompt` while a turn runs; ` ctrl+c again to exit`), a full-width rule of
 * `─`, the input line `❯ <text>`, another rule, and above it the transcript:
 * each turn starts with ` ❯ <prompt>`, replies and notes are ` ● <text>`,
 * errors ` ✗ <text>`, a cancelled turn ` ● Operation cancelled by user`. A
 * permission dialog replaces the input area with a box (`Do you want to run
 * this command?`, `❯ 1. Yes`).
 *
 * Order matters: the first matching rule wins.
 *
 * @module
 */
import type { ScreenRules } from "./classify.ts";
import { type DialogSpec, numberedOptions } from "./dialog.ts";

const RULE_LINE = /^─{20,}\s*$/;
const PROMPT = /^ ❯ /;
const INPUT = /^❯( |$)/;
const QUESTION = /Do you want to [^\n?]*\?/;

/**
 * Splits a Copilot CLI screen into `transcript` (above the input's top rule),
 * `composer` (the input line and its continuation lines), `input_box` (one
 * line when the input is drawn), `footer` (below the bottom rule) and
 * `last_turn` (from the last ` ❯ <prompt>`, while the input is drawn).
 */
export function copilotRegions(lines: string[]): Record<string, string[]> {
  const bottom = lines.findLastIndex((l) => RULE_LINE.test(l));
  const top = bottom > 0 ? lines.slice(0, bottom).findLastIndex((l) => RULE_LINE.test(l)) : -1;
  const boxed = top >= 0 && INPUT.test(lines[top + 1] ?? "");
  const transcript = lines.slice(0, boxed ? top : lines.length);
  const turnStart = transcript.findLastIndex((l) => PROMPT.test(l));
  return {
    transcript,
    composer: boxed ? lines.slice(top + 1, bottom) : [],
    input_box: boxed ? ["input box"] : [],
    footer: boxed ? lines.slice(bottom + 1) : [],
    // Without the input (a dialog, or the summary printed at exit) there is no turn to judge.
    last_turn: boxed && turnStart >= 0 ? transcript.slice(turnStart) : [],
  };
}

/** The text in the input line (without `❯`), or null when none is drawn. */
export function copilotComposer(lines: string[]): string | null {
  const { composer } = copilotRegions(lines);
  if (!composer.length) return null;
  return composer.map((l) => l.replace(INPUT, "").trimEnd()).join("\n").trim();
}

/** `echo hi > f.txt — Do you want to run this command?` from a permission box. */
export function copilotDialogQuestion(lines: string[]): string | null {
  const clean = lines.map((l) => l.replace(/^[│\s]+/, "").trimEnd());
  const q = clean.findLastIndex((l) => QUESTION.test(l));
  if (q < 0) return null;
  const question = QUESTION.exec(clean[q])![0];
  // The command sits in an inner box (`│ │ <cmd>`) above the question.
  const inner = lines.slice(0, q).findLast((l) => /^│ │ \S/.test(l));
  return inner ? `${inner.replace(/^│ │ /, "").replace(/[│\s]+$/, "")} — ${question}` : question;
}

/**
 * The permission box: `❯ 1. Yes`, `2. No, and tell Copilot what to do
 * differently (Esc to stop)`. A digit picks its option; Esc refuses.
 */
const CONFIRMATION: DialogSpec = {
  options: (lines) => numberedOptions(lines, QUESTION),
  approve: ["1"],
  deny: ["esc"],
  pick: (n) => [String(n)],
};

/** GitHub Copilot CLI screen rules. */
export const COPILOT_SCREEN: ScreenRules = {
  family: "copilot",
  version: "1.0.102",
  regions: copilotRegions,
  composer: copilotComposer,
  activity: (lines) => copilotRegions(lines).transcript.join("\n"),
  rules: [
    {
      id: "permission_dialog",
      state: "waiting_for_input",
      pattern: /Do you want to [^\n?]*\?[\s\S]*1\. Yes/,
      message: copilotDialogQuestion,
      note: "a permission box asks the user to allow a tool call",
      dialog: CONFIRMATION,
    },
    {
      id: "busy",
      state: "thinking",
      pattern: /^ \S Working\b/m,
      region: "footer",
      note: "the footer says `◉ Working` while a turn runs",
    },
    {
      id: "exit_prompt",
      state: "idle",
      pattern: /ctrl\+c again to exit/,
      region: "footer",
      note: "Copilot CLI asks for a second Ctrl-C before it exits",
    },
    {
      id: "interrupted",
      state: "waiting_for_input",
      pattern: /^ ● Operation cancelled by user/m,
      region: "last_turn",
      message: () => "Operation cancelled by user",
      note: "the last turn was cancelled (Ctrl-C, or Esc Esc after reply text began)",
    },
    {
      id: "api_error",
      state: "errored",
      pattern: /^ ✗ /m,
      region: "last_turn",
      message: (lines) => lines.findLast((l) => /^ ✗ /.test(l))?.replace(/^ ✗ /, "").trim() ?? null,
      note: "the last turn ended with an error (` ✗ 400 …`, or after retries ` ✗ Failed to get response …`)",
    },
    {
      id: "idle_prompt",
      state: "idle",
      pattern: /input box/,
      region: "input_box",
      note: "the input line is drawn and the footer does not say Working: Copilot CLI waits for a prompt",
    },
  ],
};
