/**
 * opencode's screen states, as data. Captured from the real opencode 1.18.33
 * (fixtures in tests/fixtures/opencode/, one per state; see
 * scripts/agents_capture.ts); when opencode changes its UI text, this file is
 * the fix.
 *
 * opencode draws a full-screen TUI. From the bottom up: a status line (the
 * directory, or `⬝⬝⬝⬝  esc interrupt` while a turn runs, `esc again to
 * interrupt` after one Esc), the input box (`┃` lines closed by a `╹▀▀▀`
 * edge: the input, then `Build · <model>`), and above it the transcript:
 * each turn is the prompt in a `┃` block, the reply (indented text, tool
 * calls as `$ <command>`, errors in a `┃` block) and a footer
 * `▣  Build · Mock · 5.1s` (agent, model, duration; `· interrupted` after
 * an Esc, and nothing after the model when the turn stopped on an error or
 * a rejected permission). A permission dialog replaces the input box
 * (`△ Permission required`, `# Shell command`, `$ <command>`, `Allow once
 * Allow always Reject`). Wider than ~150 columns a sidebar is drawn to the
 * right of the transcript; regions cut it off at the input box's width.
 *
 * Order matters: the first matching rule wins.
 *
 * @module
 */
import type { ScreenRules } from "./classify.ts";
import type { DialogSpec } from "./dialog.ts";

const EDGE = /^\s*╹▀{10,}/;
const FOOTER = /^\s*▣\s+(.*)$/;
const DURATION = /^(\d+h ?)?(\d+m ?)?\d+(\.\d+)?(ms|s|m|h)$/;
const PLACEHOLDER = /^Ask anything… ".*"$/;
/** The first text of a tool's block (`$ <command>`, `← Edit …`, …): not a prompt. */
const TOOL_BLOCK = /^(\$ |← |→ |# |✱ |⚙ |% |\(no output\))/;

/**
 * A line of a `┃` block at column `col` (the input box's bar column). Toasts
 * draw `┃` boxes further right: those are not blocks of the transcript.
 */
const isBar = (l: string, col: number) => l[col] === "┃" && l.slice(0, col).trim() === "";

/** The text of a `┃` line without its bar. */
const barText = (l: string) => l.replace(/^\s*┃\s?/, "").trim();

/** Where the main column ends (the sidebar starts): the input box's edge, or a dialog's hint line. */
function mainWidth(lines: string[]): number {
  const edge = lines.findLast((l) => EDGE.test(l));
  if (edge) return edge.trimEnd().length;
  const hint = lines.findLast((l) => /enter confirm( {2,}|$)/.test(l.trimEnd()));
  if (hint) return hint.indexOf("enter confirm") + "enter confirm".length;
  return Infinity;
}

/** The index of the first line of the `┃` block that ends at `end` (inclusive). */
function blockStart(lines: string[], end: number, col: number): number {
  let i = end;
  while (i > 0 && isBar(lines[i - 1], col)) i--;
  return i;
}

/**
 * How the last turn ended, from its footer: `done <duration>`,
 * `interrupted`, `error: <text>` (an error block right above a footer
 * without a duration), `stopped` (a footer without a duration and no error:
 * e.g. a rejected permission); [] while no footer is drawn.
 */
function turnEnd(turn: string[], col: number): string[] {
  const f = turn.findLastIndex((l) => FOOTER.test(l));
  if (f < 0) return [];
  const parts = FOOTER.exec(turn[f])![1].trim().split(" · ").map((p) => p.trim());
  if (parts.length >= 3 && parts.at(-1) === "interrupted") return ["interrupted"];
  if (parts.length >= 3 && DURATION.test(parts.at(-1)!)) return [`done ${parts.at(-1)}`];
  let end = f - 1;
  while (end > 0 && turn[end].trim() === "") end--;
  // The first `┃` block of a turn is its prompt; a later one right above the footer is an error.
  if (end > 0 && isBar(turn[end], col)) {
    const start = blockStart(turn, end, col);
    if (start > 0) {
      const text = turn.slice(start, end + 1).map(barText).filter(Boolean).join(" ");
      if (text && !/^\$ /.test(text)) return [`error: ${text}`];
    }
  }
  return ["stopped"];
}

/**
 * Splits an opencode screen into `status` (the bottom line), `input_box`
 * (one line when the input box is drawn), `composer` (its input lines),
 * `dialog` (a permission dialog), `transcript`, `last_turn` (from the last
 * prompt's first line) and `turn_end` (see {@link turnEnd}).
 */
export function opencodeRegions(raw: string[]): Record<string, string[]> {
  const width = mainWidth(raw);
  const lines = raw.map((l) => l.slice(0, width).trimEnd());
  const lastLine = lines.findLastIndex((l) => l.trim() !== "");
  const edge = lines.findLastIndex((l) => EDGE.test(l));
  const dialogAt = lines.findLastIndex((l) => /△ Permission required/.test(l));
  const dialogShown = dialogAt >= 0 && dialogAt > edge;
  const col = dialogShown ? lines[dialogAt].indexOf("┃") : edge >= 0 ? lines[edge].indexOf("╹") : 2;
  let top = lastLine + 1;
  let composer: string[] = [];
  let dialog: string[] = [];
  if (dialogShown) {
    top = blockStart(lines, dialogAt, col);
    dialog = lines.slice(top, lastLine + 1);
  } else if (edge > 0) {
    top = blockStart(lines, edge - 1, col);
    // Padding, the input line(s), padding, `Build · <model>`.
    composer = lines.slice(top + 1, Math.max(top + 1, edge - 2));
  }
  const transcript = lines.slice(0, top);
  // A prompt is a `┃` block that does not follow another block (the reply's tool and error blocks
  // follow the prompt's) and is not a tool's.
  let prompt = -1;
  let previous = "";
  for (let i = 0; i < transcript.length; i++) {
    const l = transcript[i];
    if (isBar(l, col) && !isBar(previous, col)) {
      const first = transcript.slice(i).find((x) => !isBar(x, col) || barText(x) !== "");
      if (first && isBar(first, col) && !TOOL_BLOCK.test(barText(first))) {
        prompt = transcript.indexOf(first, i);
      }
    }
    if (l.trim() !== "") previous = l;
  }
  const lastTurn = prompt >= 0 ? transcript.slice(prompt) : [];
  return {
    status: lastLine >= 0 && lastLine > edge ? [lines[lastLine]] : [],
    input_box: edge > 0 && !dialog.length ? ["input box"] : [],
    composer,
    dialog,
    transcript,
    last_turn: lastTurn,
    turn_end: lastTurn.length ? turnEnd(lastTurn, col) : [],
  };
}

/** The text in the input box (without the placeholder), or null when none is drawn. */
export function opencodeComposer(lines: string[]): string | null {
  const r = opencodeRegions(lines);
  if (!r.input_box.length) return null;
  const text = r.composer.map(barText).join("\n").trim();
  return PLACEHOLDER.test(text) ? "" : text;
}

/**
 * A permission dialog's request with its command, e.g.
 * `Shell command: echo hi > f.txt — Permission required`.
 */
export function opencodeDialogQuestion(dialog: string[]): string | null {
  const q = dialog.findIndex((l) => /△ Permission required/.test(l));
  if (q < 0) return null;
  const body = dialog.slice(q + 1).map(barText).filter(Boolean);
  // `# Shell command` (an icon, then the title), then the request: `$ <command>`, a path, a pattern.
  const title = (body[0] ?? "").replace(/^\S+\s+/, "");
  const detail = body.slice(1).find((l) => !/^Allow once\b/.test(l))?.replace(/^\$ /, "");
  return `${title}${detail ? `: ${detail}` : ""} — Permission required`;
}

/** What counts as progress on an opencode screen: the transcript (the animated bar is below it). */
export function opencodeActivity(lines: string[]): string {
  return opencodeRegions(lines).transcript.join("\n");
}

function turnMessage(region: string[]): string | null {
  const end = region[0] ?? "";
  if (end === "interrupted") return "Interrupted";
  if (end === "stopped") return "The turn stopped without an answer (e.g. a rejected permission)";
  return end.replace(/^error: /, "") || null;
}

/** The choices of a permission dialog's last line: `Allow once   Allow always   Reject`. */
export function opencodeDialogOptions(dialog: string[]): string[] {
  const line = dialog.map(barText).findLast((l) => /^Allow once\b/.test(l));
  if (!line) return [];
  return line.split(/\s{2,}/).map((o) => o.trim())
    .filter((o) => o && !/fullscreen|select|confirm/.test(o));
}

/**
 * The permission dialog: a row of choices, `Allow once` selected when it opens; → moves the
 * selection, Enter confirms, Esc rejects.
 */
const PERMISSION: DialogSpec = {
  options: opencodeDialogOptions,
  approve: ["enter"],
  deny: ["esc"],
  pick: (n) => [...Array<string>(n - 1).fill("right"), "enter"],
};

/** opencode screen rules. */
export const OPENCODE_SCREEN: ScreenRules = {
  family: "opencode",
  version: "1.18.33",
  regions: opencodeRegions,
  composer: opencodeComposer,
  activity: opencodeActivity,
  rules: [
    {
      id: "permission_dialog",
      state: "waiting_for_input",
      pattern: /△ Permission required[\s\S]*Allow once/,
      region: "dialog",
      message: opencodeDialogQuestion,
      note: "a permission dialog (`△ Permission required`) asks to allow a command, an edit or a tool",
      dialog: PERMISSION,
    },
    {
      id: "busy",
      state: "thinking",
      pattern: /esc (again to )?interrupt/,
      region: "status",
      note: "the status line shows the animated bar and `esc interrupt` while a turn runs",
    },
    {
      id: "interrupted",
      state: "waiting_for_input",
      pattern: /^(interrupted|stopped)$/,
      region: "turn_end",
      message: turnMessage,
      note: "the last turn's footer ends `· interrupted` (Esc twice), or has no duration and no error " +
        "(a rejected permission); opencode's plugins see the abort only as the session going idle",
    },
    {
      id: "api_error",
      state: "errored",
      pattern: /^error: /,
      region: "turn_end",
      message: turnMessage,
      note: "the last turn ended with an error block and a footer without a duration",
    },
    {
      id: "done",
      state: "idle",
      pattern: /^done /,
      region: "turn_end",
      note: "the last turn's footer shows its duration (`▣  Build · <model> · 5.1s`): the turn finished",
    },
    {
      id: "idle_prompt",
      state: "idle",
      pattern: /input box/,
      region: "input_box",
      note: "the input box is drawn and no turn runs",
    },
  ],
};
