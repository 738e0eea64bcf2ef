/**
 * How the claude-code adapter reads Claude Code 2.1.328's screen beyond the
 * shared rules of src/agents/claude_screen.ts (which it builds on): the
 * permission dialog's parts, a turn's text, error kinds, whether the turn
 * in flight has settled (the `turn_settled` / `cancel_settled` predicates).
 *
 * @module
 */
import { classifyScreen } from "../agents/classify.ts";
import { CLAUDE_SCREEN, claudeComposer, claudeRegions } from "../agents/claude_screen.ts";
import { fnv1aHex } from "../agents/dialog.ts";

/** Anchors of `wait_turn_matcher`: any of them (plus stability) ends a wait. */
export const TURN_ANCHORS = [
  "Do you want to proceed",
  "Do you trust the files",
  "Accessing workspace",
  "Yes, I trust this folder",
  "Approve",
  "Allow",
  "Total cost:",
  "Press Enter to log in",
  "Log in to Claude Code",
  "Select a model:",
  "Switch to model:",
  "Ready to code?",
  "Welcome back",
  "Select model",
  "Save and close editor to continue",
];

/** FNV-1a (32-bit) as 8 hex digits (helpers.lua `fnv1a_hex`): the dialog ids `surface.status` gives too. */
export { fnv1aHex };

/** Replaces secret-looking text in metadata (state objects are not host-redacted). */
export function redactSecrets(s: string): string {
  return s
    .replace(/(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, "$1[REDACTED]")
    .replace(/\bsk-[A-Za-z0-9_-]{16,}\b/g, "[REDACTED]")
    .replace(
      /(\b(?:api[_-]?key|token|secret|password|passwd|authorization)\b\s*[:=]\s*)[^\s,'"\]}]+/gi,
      "$1[REDACTED]",
    );
}

export const RULE = /^\s*─{20,}\s*$/;
export const DASHED = /^\s*╌{6,}\s*$/;
export const OPTION = /^\s*(?:❯\s*)?(\d+)\.\s+(.*?)\s*$/;
export const MARKER = /^✻ \S+ for \d[^\n]*/;
export const ERROR_LINE = /API Error|Request timed out|Connection error|Credit balance|usage limit/i;

/** The permission dialog below the last rule: title, summary, options, question. */
export function permissionDialog(lines: string[]) {
  const q = lines.findLastIndex((l) => /Do you want to /.test(l));
  if (q < 0) return null;
  const top = lines.slice(0, q).findLastIndex((l) => RULE.test(l));
  const body = lines.slice(top + 1);
  const head = lines.slice(top + 1, q).map((l) => l.trim()).filter((l) => l && !/^Tip:/.test(l));
  const tool = head.find((l) => !DASHED.test(l)) ?? "";
  const dashed = head.map((l, i) => (DASHED.test(l) ? i : -1)).filter((i) => i >= 0);
  const summary = dashed.length >= 2
    ? head.slice(dashed[0] + 1, dashed[1]).join(" ")
    : head.filter((l) => l !== tool).join(" ");
  const options = lines.slice(q + 1).map((l) => OPTION.exec(l)?.[2]).filter((o): o is string => !!o);
  return {
    tool: tool.replace(/ command$/, ""),
    title: tool,
    summary,
    question: lines[q].trim(),
    options,
    body: body.map((l) => l.trimEnd()).join("\n").trim(),
  };
}

export function errorKind(msg: string): string {
  if (/\b429\b|rate.?limit/i.test(msg)) return "rate_limit";
  if (/quota|credit balance|usage limit|billing/i.test(msg)) return "quota";
  if (/\b401\b|\b403\b|authentication|api key|invalid.*key|log ?in/i.test(msg)) return "auth";
  if (/timed out|connection|ECONN|network|fetch failed|socket/i.test(msg)) return "connection";
  if (/API Error/i.test(msg)) return "api";
  return "unknown";
}

/** The text of a turn: the `● ` answer lines and their continuation, without tool rows. */
export function turnText(turn: string[]): string {
  const out: string[] = [];
  let inAnswer = false;
  for (const raw of turn.slice(1)) {
    const l = raw.trimEnd();
    if (MARKER.test(l.trim())) break;
    if (l.startsWith("● ")) {
      inAnswer = true;
      out.push(l.slice(2));
    } else if (inAnswer && /^ {2}\S/.test(l) && !/^ {2}⎿/.test(l)) {
      out.push(l.slice(2));
    } else if (inAnswer && l === "") {
      out.push("");
    } else {
      inAnswer = false;
    }
  }
  return out.join("\n").trim();
}

/** Dialog anchors that end a wait whatever turn is in flight. */
const DIALOG_ANCHOR = new RegExp(
  TURN_ANCHORS.filter((a) => !["Approve", "Allow", "Total cost:", "Do you want to proceed"].includes(a))
    .map((a) => a.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"),
);

/** Whether the last `❯ ` turn of the transcript region is the turn of `prompt`. */
export function ownTurn(transcript: string[], prompt: string): string[] | null {
  if (!prompt) return null;
  const head = prompt.slice(0, 40).replace(/\s+/g, " ");
  const start = transcript.findLastIndex((l) => /^❯ /.test(l));
  if (start < 0) return null;
  const shown = transcript.slice(start, start + 4).join(" ").replace(/^❯ /, "").replace(/\s+/g, " ");
  if (!shown.startsWith(head.slice(0, Math.min(head.length, shown.length)))) return null;
  return transcript.slice(start);
}

/**
 * The `turn_settled` predicate: the turn in flight has come to rest (its
 * prompt is on screen with no work indicator: done, interrupted or failed;
 * after a cancel, `cancel_settled`), or a dialog waits for an answer (not the
 * one answered last).
 */
export function turnSettled(
  input: { screen?: string; params?: { prompt?: string; answered?: string; cancelled?: boolean } },
) {
  const screen = input.screen ?? "";
  const lines = screen.split("\n");
  const bottom = lines.slice(-30).join("\n");
  const anchor = DIALOG_ANCHOR.exec(bottom);
  if (anchor) return { matched: true, evidence: `dialog: ${anchor[0]}` };
  if (input.params?.cancelled) return cancelSettled({ screen, params: { prompt: input.params.prompt } });
  const verdict = classifyScreen(CLAUDE_SCREEN, screen);
  if (!verdict || verdict.state === "thinking") return false;
  if (verdict.rule === "permission_dialog") {
    const d = permissionDialog(lines);
    const id = d ? fnv1aHex(d.body) : "";
    return id !== (input.params?.answered ?? "")
      ? { matched: true, evidence: `permission dialog ${id}` }
      : false;
  }
  const prompt = input.params?.prompt ?? "";
  if (!prompt) return { matched: true, evidence: verdict.rule };
  return ownTurn(claudeRegions(lines).transcript, prompt) ? { matched: true, evidence: verdict.rule } : false;
}

/**
 * The `cancel_settled` predicate: the work indicator is gone and Claude Code
 * has finished unwinding the turn: `Interrupted` in the last turn, or the
 * interrupted prompt put back in the input box (it comes ~1 s after the
 * spinner stops), or the turn had already ended.
 */
export function cancelSettled(input: { screen?: string; params?: { prompt?: string } }) {
  const screen = input.screen ?? "";
  const verdict = classifyScreen(CLAUDE_SCREEN, screen);
  if (verdict?.state === "thinking") return false;
  const prompt = (input.params?.prompt ?? "").slice(0, 40);
  if (!prompt) return { matched: true, evidence: verdict?.rule ?? "no rule" };
  const lines = screen.split("\n");
  const regions = claudeRegions(lines);
  if (regions.last_turn.some((l) => /Interrupted/.test(l))) return { matched: true, evidence: "interrupted" };
  const draft = claudeComposer(lines) ?? "";
  if (draft.replace(/\s+/g, " ").startsWith(prompt.replace(/\s+/g, " "))) {
    return { matched: true, evidence: "prompt put back in the input box" };
  }
  const own = ownTurn(regions.transcript, prompt);
  if (own?.some((l) => MARKER.test(l.trim()) || ERROR_LINE.test(l))) {
    return { matched: true, evidence: "turn ended" };
  }
  return false;
}
