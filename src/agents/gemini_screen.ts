/**
 * Gemini CLI's screen states, as data. Captured from the real Gemini CLI
 * 0.61.0 (fixtures in tests/fixtures/gemini/, each with and without
 * COLORTERM=truecolor; see scripts/agents_capture.ts); when Gemini CLI changes
 * its UI text, this file is the fix.
 *
 * Gemini CLI renders inline (no alternate screen). From the bottom up: a
 * footer (workspace, sandbox, model), the input line ` > <text>` (placeholder
 * `Type your message or @path/to/file`; with truecolor framed by rows of
 * `▄`/`▀`), a hint line, a full-width rule of `─`, and right above the rule a
 * line shared by `? for shortcuts` and, while a turn runs, the spinner
 * (` ⠋ Thinking... (esc to cancel, 3s)`). Above is the transcript: each turn
 * starts with ` > <prompt>` and replies are `✦ <text>` lines. There is no
 * "done" line. A tool confirmation replaces the input area with a box
 * (`Allow execution of [Shell]?`, `● 1. Allow once`). Gemini fires no hook
 * when a turn is cancelled or a tool refused (`ℹ Request cancelled.`).
 *
 * Order matters: the first matching rule wins.
 *
 * @module
 */
import type { ScreenRules } from "./classify.ts";
import { type DialogSpec, numberedOptions } from "./dialog.ts";

const RULE_LINE = /^─{20,}\s*$/;
const FRAME = /^[▄▀]{10,}\s*$/;
const PROMPT = /^ > /;
const PLACEHOLDER = /^\s*Type your message or @path\/to\/file\s*$/;
const SPINNER = /^ ?[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /;
const QUESTION = /(Allow execution of|Apply this change|Allow|Do you want to)[^\n]*\?/;
/** What Gemini CLI shows above the rule before its config has loaded. */
const BEFORE_INIT =
  /^\s*(⚠ |ℹ (Initializing\.\.\.|Waiting for MCP servers)|Queued \(press ↑ to edit\):|\? for shortcuts\s*$)/;

/**
 * Splits a Gemini CLI screen into `status` (the lines right above the rule),
 * `composer` (the input line and its continuation lines), `input_box` (one
 * line when the input is drawn), `transcript`, `last_turn` (from the last
 * ` > <prompt>` above the rule) and `starting` (one line while nothing but
 * the input is drawn: Gemini CLI is still loading its config).
 */
export function geminiRegions(lines: string[]): Record<string, string[]> {
  const rule = lines.findLastIndex((l) => RULE_LINE.test(l));
  const top = rule >= 0 ? rule : lines.length;
  let input = -1;
  if (rule >= 0) {
    for (let i = rule + 1; i < lines.length; i++) {
      if (PROMPT.test(lines[i])) {
        input = i;
        break;
      }
    }
  }
  let end = input + 1;
  while (
    input >= 0 && end < lines.length && lines[end].trim() !== "" && !FRAME.test(lines[end]) &&
    !/^ workspace \(/.test(lines[end])
  ) end++;
  // The status line sits right above the rule; `Press Ctrl+C again to exit.` a line or two higher.
  let statusStart = top;
  while (
    statusStart > 0 && top - statusStart < 3 && !FRAME.test(lines[statusStart - 1]) &&
    !PROMPT.test(lines[statusStart - 1])
  ) statusStart--;
  const transcript = lines.slice(0, top);
  const turnStart = transcript.findLastIndex((l) => PROMPT.test(l));
  // Until its config has loaded Gemini CLI draws only the input area (no header, no history) and
  // queues what is typed: nothing above the rule but warnings, hints and the queue.
  const content = transcript.filter((l) => l.trim() !== "" && !BEFORE_INIT.test(l));
  return {
    status: lines.slice(statusStart, top),
    composer: input >= 0 ? lines.slice(input, end) : [],
    input_box: input >= 0 ? ["input box"] : [],
    transcript,
    last_turn: turnStart >= 0 ? transcript.slice(turnStart) : [],
    starting: input >= 0 && content.length === 0 ? ["no header yet"] : [],
  };
}

/** The text in the input line (without ` > ` and the placeholder), or null when none is drawn. */
export function geminiComposer(lines: string[]): string | null {
  const { composer } = geminiRegions(lines);
  if (!composer.length) return null;
  const text = composer.map((l) => l.replace(PROMPT, "").replace(/^ {3}/, "").trimEnd()).join("\n");
  return PLACEHOLDER.test(text) ? "" : text.trim();
}

/** `Shell: echo hi > f.txt — Allow execution of [Shell]?` from a confirmation box. */
export function geminiDialogQuestion(lines: string[]): string | null {
  const clean = lines.map((l) => l.replace(/^[│\s]+/, "").replace(/[│\s]+$/, ""));
  const q = clean.findLastIndex((l) => QUESTION.test(l));
  if (q < 0) return null;
  const question = QUESTION.exec(clean[q])![0];
  const head = clean.slice(0, q).findLast((l) => /^\? \S/.test(l));
  const m = head ? /^\? (\S+)\s+(.*)$/.exec(head) : null;
  return m && m[2] ? `${m[1]}: ${m[2]} — ${question}` : question;
}

/** What counts as progress on a Gemini CLI screen: the transcript without the spinner line. */
export function geminiActivity(lines: string[]): string {
  return geminiRegions(lines).transcript.filter((l) => !SPINNER.test(l) && !/esc to cancel/.test(l)).join(
    "\n",
  );
}

function lastMatching(re: RegExp) {
  return (lines: string[]) => {
    const line = lines.findLast((l) => re.test(l));
    return line ? line.replace(/^[\sℹ✕]+/, "").trim() : null;
  };
}

/**
 * The confirmation box: `● 1. Allow once`, `2. Allow for this session`, `3. No, suggest changes
 * (esc)`. A digit picks its option and confirms it; Esc cancels the request.
 */
const CONFIRMATION: DialogSpec = {
  options: (lines) => numberedOptions(lines, QUESTION),
  approve: ["1"],
  deny: ["esc"],
  pick: (n) => [String(n)],
};

/** Gemini CLI screen rules. */
export const GEMINI_SCREEN: ScreenRules = {
  family: "gemini",
  version: "0.61.0",
  regions: geminiRegions,
  composer: geminiComposer,
  activity: geminiActivity,
  rules: [
    {
      id: "permission_dialog",
      state: "waiting_for_input",
      pattern: /(Allow execution of|Apply this change|Allow|Do you want to)[^\n]*\?[\s\S]*1\. (Allow|Yes)/,
      message: geminiDialogQuestion,
      note: "a confirmation box asks the user to allow a tool call",
      dialog: CONFIRMATION,
    },
    {
      id: "hooks_after_turn",
      state: "idle",
      pattern: /Executing Hooks: (paneflow-(AfterAgent|SessionEnd)(, )?)+ \(esc to cancel/,
      region: "status",
      note: "the busy line only names paneflow's AfterAgent hook: the turn is over and Gemini CLI " +
        "runs the hook that reports it",
    },
    {
      id: "busy",
      state: "thinking",
      pattern: /esc to cancel/,
      region: "status",
      note: "the spinner line above the rule says `esc to cancel` while a turn runs",
    },
    {
      id: "exit_prompt",
      state: "idle",
      pattern: /Press Ctrl\+C again to exit/,
      region: "status",
      note: "Gemini CLI asks for a second Ctrl-C before it exits",
    },
    {
      id: "interrupted",
      state: "waiting_for_input",
      pattern: /^ℹ Request cancelled\./m,
      region: "last_turn",
      message: lastMatching(/^ℹ Request cancelled/),
      note: "the last turn was cancelled (Esc, or a refused tool call); Gemini CLI fires no hook for this",
    },
    {
      id: "api_error",
      state: "errored",
      pattern: /^✕ |This request failed/m,
      region: "last_turn",
      message: lastMatching(/^✕ /),
      note: "the last turn ended with an API error (`✕ [API Error: …]`)",
    },
    {
      id: "starting",
      state: "unknown_running",
      pattern: /no header yet/,
      region: "starting",
      note: "Gemini CLI has drawn its input but not yet its header: its config is still loading and a " +
        "prompt typed now is only queued",
    },
    {
      id: "idle_prompt",
      state: "idle",
      pattern: /input box/,
      region: "input_box",
      note: "the input line is drawn with no spinner: Gemini CLI waits for a prompt",
    },
  ],
};
