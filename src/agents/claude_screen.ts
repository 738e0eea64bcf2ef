/**
 * Claude Code's screen states, as data. Captured from the real CLI
 * (fixtures in tests/fixtures/claude/, one per state); when Claude Code
 * changes its UI text, this file is the fix.
 *
 * Claude Code 2.1 draws, from the bottom up: a status line (`? for
 * shortcuts`, `esc to interrupt`, `Press Ctrl-C again to exit`), the input
 * box between two rules of `─` with a `❯` prompt, and above it the
 * transcript, where each turn starts with `❯ <prompt>`. Rules look only at
 * the region they are about, so an `Interrupted` line from an old turn does
 * not count once a new turn has started.
 *
 * Order matters: the first matching rule wins.
 *
 * @module
 */
import type { ScreenRules } from "./classify.ts";
import { type DialogSpec, numberedOptions } from "./dialog.ts";

const RULE_LINE = /^\s*─{20,}\s*$/;
const BOX = /[│╭╮╰╯─]/g;

/**
 * Splits a Claude Code screen into `status`, `composer`, `input_box` (one
 * line when the input box is drawn), `transcript` and `last_turn`.
 */
export function claudeRegions(lines: string[]): Record<string, string[]> {
  const rules: number[] = [];
  lines.forEach((l, i) => RULE_LINE.test(l) && rules.push(i));
  const last = rules.at(-1) ?? lines.length;
  const top = rules.length >= 2 ? rules.at(-2)! : last;
  const transcript = lines.slice(0, top);
  const turnStart = transcript.findLastIndex((l) => /^❯ /.test(l));
  return {
    status: lines.slice(last + 1),
    composer: rules.length >= 2 ? lines.slice(top + 1, last) : [],
    input_box: rules.length >= 2 ? ["input box"] : [],
    transcript,
    last_turn: turnStart >= 0 ? transcript.slice(turnStart) : transcript.slice(-15),
  };
}

/** The text in the input box (without the `❯` prompt), or null when there is no input box. */
export function claudeComposer(lines: string[]): string | null {
  const { composer } = claudeRegions(lines);
  if (!composer.length) return null;
  return composer.map((l) => l.replace(/^❯ ?/, "").replace(/^ {2}/, "").trimEnd()).join("\n").trim();
}

/**
 * The question of a permission dialog with what it is about, e.g.
 * `Bash command: touch x — Do you want to proceed?`. The dialog sits below the
 * last rule: a title (`Bash command`), a description, the command between two
 * dashed rules (`╌`), the question and numbered options.
 */
export function dialogQuestion(lines: string[]): string | null {
  const q = lines.findLastIndex((l) => /Do you want to /.test(l));
  if (q < 0) return null;
  const question = lines[q].replace(BOX, "").trim();
  const top = lines.slice(0, q).findLastIndex((l) => RULE_LINE.test(l));
  const body = lines.slice(top + 1, q).map((l) => l.trim()).filter((l) => l && !/^Tip:/.test(l));
  const title = body.find((l) => !/^╌+$/.test(l)) ?? null;
  const dashed = body.map((l, i) => (/^╌+$/.test(l) ? i : -1)).filter((i) => i >= 0);
  const subject = dashed.length >= 2 ? body.slice(dashed[0] + 1, dashed[1]).join(" ") : null;
  if (title && subject) return `${title}: ${subject} — ${question}`;
  return title ? `${title} — ${question}` : question;
}

const SPINNER_LINE = /^[✻✽✢✶✳·*] \S[^\n]*…/;

/**
 * What counts as progress on a Claude Code screen: the transcript without
 * the spinner line, whose glyph, verb and timer animate even while a request
 * hangs (so a hung turn can become `stalled`).
 */
export function claudeActivity(lines: string[]): string {
  return claudeRegions(lines).transcript.filter((l) => !SPINNER_LINE.test(l.trim())).join("\n");
}

function lastMatching(re: RegExp) {
  return (lines: string[]) => {
    const line = lines.findLast((l) => re.test(l));
    return line ? line.replace(/^[\s⎿●]+/, "").trim() : null;
  };
}

/**
 * Claude Code's permission dialog: `❯ 1. Yes`, `2. Yes, and always allow …`, …, `No`. A digit
 * picks its option and confirms it; Esc refuses (the turn shows `Interrupted`).
 */
const PERMISSION: DialogSpec = {
  options: (lines) => numberedOptions(lines, /Do you want to /),
  approve: ["1"],
  deny: ["esc"],
  pick: (n) => [String(n)],
};

/** Claude Code screen rules. */
export const CLAUDE_SCREEN: ScreenRules = {
  family: "claude",
  version: "2.1.328",
  regions: claudeRegions,
  composer: claudeComposer,
  activity: claudeActivity,
  rules: [
    {
      id: "permission_dialog",
      state: "waiting_for_input",
      pattern: /Do you want to [^\n]*\?[\s\S]*1\.\s*Yes/,
      message: dialogQuestion,
      note: "a permission dialog asks the user to approve a tool call",
      dialog: PERMISSION,
    },
    {
      id: "busy",
      state: "thinking",
      pattern: /esc to interrupt/i,
      region: "status",
      note: "the status line says `esc to interrupt` while a turn runs",
    },
    {
      id: "busy_spinner",
      state: "thinking",
      pattern: /^[✻✽✢✶✳·*] \S[^\n]*…/m,
      region: "last_turn",
      note: "the last turn shows the spinner line (`✽ Thinking…`): a turn runs while the input box " +
        "holds a draft, which hides `esc to interrupt` from the status line",
    },
    {
      id: "exit_prompt",
      state: "idle",
      pattern: /Press Ctrl-[CD] again to exit/i,
      region: "status",
      note: "Claude Code asks for a second Ctrl-C before it exits",
    },
    {
      id: "interrupted",
      state: "waiting_for_input",
      pattern: /Interrupted[^\n]*What should Claude do instead\?/,
      region: "last_turn",
      message: lastMatching(/Interrupted/),
      note: "the last turn was interrupted (Esc, or a refused dialog); no hook fires for this",
    },
    {
      id: "api_error",
      state: "errored",
      pattern: /API Error|Request timed out/,
      region: "last_turn",
      message: lastMatching(/API Error|Request timed out/),
      note: "the last turn ended with an API error",
    },
    {
      id: "idle_prompt",
      state: "idle",
      pattern: /\? for shortcuts|^❯/m,
      region: "status",
      note: "the input box is shown with no busy line: the agent waits for a prompt",
    },
    {
      id: "busy_unfinished",
      state: "thinking",
      // Output (`● ...`) in the last turn and no `✻ <Verb> for Ns · done` line after it.
      pattern: /^(?![\s\S]*· done)[\s\S]*?(?:^|\n)● /,
      region: "last_turn",
      note: "the input box holds a draft (which hides the status hints) and the last turn has output " +
        "but no `· done` line yet: the turn still runs",
    },
    {
      id: "idle_input",
      state: "idle",
      pattern: /input box/,
      region: "input_box",
      note: "the input box holds a draft (the shortcuts hint hides then) and no turn runs",
    },
  ],
};
