/**
 * Codex CLI's screen states, as data. Captured from the real Codex CLI
 * 0.169.0 (fixtures in tests/fixtures/codex/, one per state; see
 * scripts/agents_capture.ts); when Codex changes its UI text, this file is the fix.
 *
 * Codex draws a full-screen TUI. From the bottom up: a footer (`? for
 * shortcuts`, or `tab to queue message` while a turn runs and a draft is
 * typed) under a `<model> · <cwd>` line, the input line `› <text>` (with a
 * placeholder such as `Ask Codex to do anything` when empty), a status line
 * right above it while a turn runs (`• Working (3s • esc to interrupt)`), and
 * above that the transcript, where each turn starts with `› <prompt>` and a
 * finished one ends with `Worked for 3s • 15:52`. Codex fires no hook when a
 * turn is interrupted, a command is refused or the API fails: those are
 * `■ …` lines in the last turn.
 *
 * Order matters: the first matching rule wins.
 *
 * @module
 */
import type { ScreenRules } from "./classify.ts";
import { type DialogSpec, numberedOptions } from "./dialog.ts";

const DIALOG = /Would you like to [^\n]*\?/;
const PLACEHOLDER =
  /^(Ask Codex to do anything|Find and fix a bug in @filename|Explain this codebase|Summarize recent commits|Implement \{feature\}|Write tests for @filename|Improve documentation in @filename|Run \/review on my current changes|Use \/skills to list available skills)$/;

/** Index of the input line (`› …`), the last `›` line that is not a dialog option; -1 if none. */
function inputIndex(lines: string[]): number {
  for (let i = lines.length - 1; i >= 0; i--) {
    // A dialog below the last `›` line replaces the input: that line is the echoed prompt.
    if (DIALOG.test(lines[i]) || /Press enter to confirm/.test(lines[i])) return -1;
    if (/^› /.test(lines[i]) && !/^› \d+\. /.test(lines[i])) return i;
    if (/^›$/.test(lines[i])) return i;
  }
  return -1;
}

/**
 * Splits a Codex screen into `footer` (below the input), `composer` (the
 * input line and its continuation lines), `input_box` (one line when the
 * input line is drawn), `status` (the lines between the last turn's output
 * and the input), `transcript` and `last_turn` (from the last `› <prompt>`).
 */
export function codexRegions(lines: string[]): Record<string, string[]> {
  const input = inputIndex(lines);
  if (input < 0) {
    const last = lines.findLastIndex((l) => /^› /.test(l));
    return {
      footer: [],
      composer: [],
      input_box: [],
      status: [],
      transcript: lines,
      last_turn: last >= 0 ? lines.slice(last) : [],
    };
  }
  let end = input + 1;
  while (end < lines.length && lines[end].trim() !== "") end++;
  const transcript = lines.slice(0, input);
  const turnStart = transcript.findLastIndex((l) => /^› /.test(l));
  let statusStart = input;
  while (
    statusStart > 0 && (lines[statusStart - 1].trim() === "" || /^• Working/.test(lines[statusStart - 1]))
  ) {
    statusStart--;
  }
  return {
    footer: lines.slice(end),
    composer: lines.slice(input, end),
    input_box: ["input box"],
    status: lines.slice(statusStart, input),
    transcript,
    last_turn: turnStart >= 0 ? transcript.slice(turnStart) : [],
  };
}

/** The text in the input line (without `› ` and without the placeholder), or null when none is drawn. */
export function codexComposer(lines: string[]): string | null {
  const { composer } = codexRegions(lines);
  if (!composer.length) return null;
  const text = composer.map((l) => l.replace(/^› ?/, "").replace(/^ {2}/, "").trimEnd()).join("\n").trim();
  return PLACEHOLDER.test(text) ? "" : text;
}

/**
 * The question of an approval dialog with its command, e.g.
 * `Run: echo hi > f.txt — Would you like to run the following command?`
 * (plus Codex's `Reason:` when it gives one).
 */
export function codexDialogQuestion(lines: string[]): string | null {
  const q = lines.findLastIndex((l) => DIALOG.test(l));
  if (q < 0) return null;
  const question = lines[q].trim();
  const after = lines.slice(q + 1, q + 12);
  const cmd = after.find((l) => /^\s*\$ /.test(l))?.trim().slice(2);
  const reason = after.find((l) => /^\s*Reason: /.test(l))?.trim();
  const subject = cmd ? `Run: ${cmd}` : null;
  return [subject ? `${subject} — ${question}` : question, reason].filter(Boolean).join(" ");
}

/** The hooks-review dialog's text, e.g. `Hooks need review: 10 hooks are new or changed. …`. */
function hooksReview(lines: string[]): string {
  const i = lines.findIndex((l) => /Hooks need review/.test(l));
  const count = lines.slice(i + 1, i + 3).map((l) => l.trim()).filter(Boolean)[0] ?? "";
  return `Codex asks to review its hooks before they run (${count || "new or changed hooks"}); ` +
    "choose in the dialog: paneflow never trusts hooks on your behalf";
}

const WORKING = /^• Working \(/;

/** What counts as progress on a Codex screen: the transcript without the `Working (Ns …)` timer. */
export function codexActivity(lines: string[]): string {
  return codexRegions(lines).transcript.filter((l) => !WORKING.test(l.trim())).join("\n");
}

function lastMatching(re: RegExp) {
  return (lines: string[]) => {
    const line = lines.findLast((l) => re.test(l));
    return line ? line.replace(/^[\s■•]+/, "").trim() : null;
  };
}

/**
 * The hooks review: `› 1. Review hooks`, `2. Trust all and continue`, `3. Continue without
 * trusting (hooks won't run)`, `enter confirm · esc skip`. A digit only moves the selection:
 * Enter confirms it.
 */
const HOOKS_REVIEW: DialogSpec = {
  options: (lines) => numberedOptions(lines, /Hooks need review/),
  approve: ["2", "enter"],
  deny: ["3", "enter"],
  pick: (n) => [String(n), "enter"],
};

/**
 * The approval dialog: `› 1. Yes, proceed (y)`, `2. Yes, and don't ask again … (p)`, `3. No, and
 * tell Codex what to do differently (esc)`. A digit picks its option and confirms it.
 */
const APPROVAL: DialogSpec = {
  options: (lines) => numberedOptions(lines, DIALOG),
  approve: ["1"],
  deny: ["esc"],
  pick: (n) => [String(n)],
};

/** Codex CLI screen rules. */
export const CODEX_SCREEN: ScreenRules = {
  family: "codex",
  version: "0.169.0",
  regions: codexRegions,
  composer: codexComposer,
  activity: codexActivity,
  rules: [
    {
      id: "trust_dialog",
      state: "waiting_for_input",
      pattern: /Hooks need review[\s\S]*Trust all and continue/,
      message: hooksReview,
      note: "Codex asks the user to review new or changed hooks before they run (once per change)",
      dialog: HOOKS_REVIEW,
    },
    {
      id: "permission_dialog",
      state: "waiting_for_input",
      pattern: /Would you like to [^\n]*\?[\s\S]*1\. Yes/,
      message: codexDialogQuestion,
      note: "an approval dialog asks the user to allow a command or an edit",
      dialog: APPROVAL,
    },
    {
      id: "busy",
      state: "thinking",
      pattern: /esc to interrupt/,
      region: "status",
      note: "the status line above the input says `Working (… esc to interrupt)` while a turn runs",
    },
    {
      id: "busy_draft",
      state: "thinking",
      pattern: /tab to queue message/,
      region: "footer",
      note: "the footer offers `tab to queue message`: a turn runs and the input holds a draft",
    },
    {
      id: "interrupted",
      state: "waiting_for_input",
      pattern: /^■ Conversation interrupted/m,
      region: "last_turn",
      message: lastMatching(/^■ Conversation interrupted/),
      note: "the last turn was interrupted (Esc, or a refused command); Codex fires no hook for this",
    },
    {
      id: "api_error",
      state: "errored",
      pattern: /^■ /m,
      region: "last_turn",
      message: lastMatching(/^■ /),
      note: "the last turn ended with an error line (`■ …`); Codex fires no hook for this",
    },
    {
      id: "busy_unfinished",
      state: "thinking",
      // Output (`• ...`) in the last turn and no `Worked for` line after it.
      pattern: /^(?![\s\S]*Worked for )[\s\S]*?(?:^|\n)• /,
      region: "last_turn",
      note: "the last turn has output but no `Worked for` line yet (the busy line hides while text streams)",
    },
    {
      id: "idle_prompt",
      state: "idle",
      pattern: /\? for shortcuts/,
      region: "footer",
      note: "the footer shows `? for shortcuts` and no turn runs: Codex waits for a prompt",
    },
    {
      id: "idle_input",
      state: "idle",
      pattern: /input box/,
      region: "input_box",
      note: "the input line is drawn and no turn runs",
    },
  ],
};
