/**
 * Qwen Code's screen states, as data. Captured from the real Qwen Code 0.24.4
 * (fixtures in tests/fixtures/qwen/; see scripts/agents_capture_more.ts);
 * when Qwen Code changes its UI text, this file is the fix.
 *
 * Qwen Code renders inline. From the bottom up: a footer (`➜ <dir> · <model>`,
 * `⏸ Ask permissions (shift + tab to cycle)`, or `Press Ctrl+C again to
 * exit.`), a full-width rule of `─`, the input line `> <text>` (placeholder
 * `Type your message or @path/to/file`; typed text ends with a zero-width
 * space), another rule, and above it the transcript: each turn starts with
 * `  > <prompt>`, replies are `  ◆︎ <text>`, tool calls `  ✓ Shell …`, and
 * while a turn runs its last line is the spinner (`  ⠙ <phrase>... (1s · esc
 * to cancel)`). A permission dialog replaces the input area
 * (`Allow execution of: 'echo'?`, `› 1. Yes, allow once`). An Esc before any
 * reply text drops the turn from the transcript and puts the prompt back
 * into the input line; nothing on screen says it was cancelled (paneflow
 * knows from the key it delivered). After a tool turn an Esc leaves
 * `●︎ Request cancelled.` with the prompt echoed again below it.
 *
 * Order matters: the first matching rule wins.
 *
 * @module
 */
import type { ScreenRules } from "./classify.ts";
import { type DialogSpec, numberedOptions } from "./dialog.ts";

const RULE_LINE = /^─{20,}\s*$/;
const PROMPT = /^ {2}> /;
const INPUT = /^> /;
const PLACEHOLDER = /^\s*Type your message or @path\/to\/file\s*$/;
const SPINNER = /^ {2}[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /;
const QUESTION = /(Allow execution of|Apply this change|Allow|Do you want to)[^\n]*\?/;

/**
 * Splits a Qwen Code screen into `transcript` (above the input's top rule),
 * `composer` (the input line and its continuation lines), `input_box` (one
 * line when the input is drawn), `status` (the transcript's last line: the
 * spinner while a turn runs), `footer` (below the input's bottom rule) and
 * `last_turn` (from the last `  > <prompt>`).
 */
export function qwenRegions(lines: string[]): Record<string, string[]> {
  const bottom = lines.findLastIndex((l) => RULE_LINE.test(l));
  const top = bottom > 0 ? lines.slice(0, bottom).findLastIndex((l) => RULE_LINE.test(l)) : -1;
  const boxed = top >= 0 && INPUT.test(lines[top + 1] ?? "");
  const transcript = lines.slice(0, boxed ? top : lines.length);
  const lastText = transcript.findLastIndex((l) => l.trim() !== "");
  const turnStart = transcript.findLastIndex((l) => PROMPT.test(l));
  return {
    transcript,
    composer: boxed ? lines.slice(top + 1, bottom) : [],
    input_box: boxed ? ["input box"] : [],
    status: lastText >= 0 ? [transcript[lastText]] : [],
    footer: boxed ? lines.slice(bottom + 1) : [],
    last_turn: turnStart >= 0 ? transcript.slice(turnStart) : [],
  };
}

/** The text in the input line (without `> `, the placeholder and the trailing zero-width space), or null. */
export function qwenComposer(lines: string[]): string | null {
  const { composer } = qwenRegions(lines);
  if (!composer.length) return null;
  const text = composer.map((l) => l.replace(INPUT, "").replace(/^ {2}/, "").replace(/\u200b/g, "").trimEnd())
    .join("\n");
  return PLACEHOLDER.test(text) ? "" : text.trim();
}

/** `Shell: echo hi > f.txt — Allow execution of: 'echo'?` from a permission dialog. */
export function qwenDialogQuestion(lines: string[]): string | null {
  const q = lines.findLastIndex((l) => QUESTION.test(l));
  if (q < 0) return null;
  const question = QUESTION.exec(lines[q])![0];
  const head = lines.slice(0, q).findLastIndex((l) => /^ {2}\? \S/.test(l));
  if (head < 0) return question;
  const tool = /^ {2}\? (\S+)/.exec(lines[head])![1];
  // The command (or file) the dialog is about, indented on its own lines between the head and the question.
  const subject = lines.slice(head + 1, q).map((l) => l.trim()).find((l) => l !== "");
  return subject ? `${tool}: ${subject} — ${question}` : question;
}

/** What counts as progress on a Qwen Code screen: the transcript without the spinner line. */
export function qwenActivity(lines: string[]): string {
  return qwenRegions(lines).transcript.filter((l) => !SPINNER.test(l) && !/esc to cancel/.test(l)).join("\n");
}

/**
 * The permission dialog: `› 1. Yes, allow once`, `2. Always allow …`, `4. No,
 * suggest changes (esc)`. A digit picks its option and confirms it; Esc refuses.
 */
const CONFIRMATION: DialogSpec = {
  options: (lines) => numberedOptions(lines, QUESTION),
  approve: ["1"],
  deny: ["esc"],
  pick: (n) => [String(n)],
};

/** Qwen Code screen rules. */
export const QWEN_SCREEN: ScreenRules = {
  family: "qwen",
  version: "0.24.4",
  regions: qwenRegions,
  composer: qwenComposer,
  activity: qwenActivity,
  rules: [
    {
      id: "permission_dialog",
      state: "waiting_for_input",
      pattern: /(Allow execution of|Apply this change|Allow|Do you want to)[^\n]*\?[\s\S]*1\. (Allow|Yes)/,
      message: qwenDialogQuestion,
      note: "a permission dialog asks the user to allow a tool call",
      dialog: CONFIRMATION,
    },
    {
      id: "busy",
      state: "thinking",
      pattern: /esc to cancel\)\s*$/,
      region: "status",
      note: "the transcript's last line is the spinner (`… (3s · esc to cancel)`) while a turn runs",
    },
    {
      id: "exit_prompt",
      state: "idle",
      pattern: /Press Ctrl\+C again to exit/,
      region: "footer",
      note: "Qwen Code asks for a second Ctrl-C before it exits",
    },
    {
      id: "api_error",
      state: "errored",
      pattern: /^ {2}✕ /m,
      region: "last_turn",
      message: (lines) => lines.findLast((l) => /^ {2}✕ /.test(l))?.replace(/^\s*✕\s*/, "").trim() ?? null,
      note: "the last turn ended with an API error (`✕ [API Error: …]`)",
    },
    {
      id: "interrupted",
      state: "waiting_for_input",
      pattern: /(?:^|\n) {2}●\uFE0E? ?Request cancelled\.\s*(?:\n {2}> [^\n]*)?\s*$/,
      region: "transcript",
      message: () => "Request cancelled",
      note: "the transcript ends with `Request cancelled.` (and the cancelled prompt echoed again): " +
        "the turn was interrupted; Qwen Code fires no Stop hook for this",
    },
    {
      id: "refused",
      state: "waiting_for_input",
      pattern: /^ {2}- [A-Z]\w* .*$(?![\s\S]*\S)/m,
      region: "last_turn",
      message: (lines) => {
        const line = lines.findLast((l) => /^ {2}- [A-Z]/.test(l));
        return line ? `Refused: ${line.replace(/^ {2}- /, "").trim()}` : null;
      },
      note: "the last turn ends with a tool call marked `-`: the user refused it, and Qwen Code waits " +
        "for what to do instead",
    },
    {
      id: "idle_prompt",
      state: "idle",
      pattern: /input box/,
      region: "input_box",
      note: "the input line is drawn with no spinner: Qwen Code waits for a prompt",
    },
  ],
};
