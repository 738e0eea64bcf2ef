/**
 * Dialogs an agent asks the user to answer (a permission dialog, Codex's
 * hooks review): how each agent's dialog lists its options and which keys
 * answer it. The keys are data beside the screen rules that detect the
 * dialog (`dialog` on a rule in ./claude_screen.ts, ./codex_screen.ts,
 * ./gemini_screen.ts, ./opencode_screen.ts, ./qwen_screen.ts,
 * ./copilot_screen.ts), so a UI change
 * is one data fix for detection and answering alike. `surface.answer`
 * (../typing/answer.ts) presses
 * the keys.
 *
 * Light: no npm package, no host state.
 *
 * @module
 */

/** How one kind of dialog is answered. Keys are `surface.send_keystroke` names, plus `enter`. */
export interface DialogSpec {
  /** The dialog's options as it lists them, in order (labels without numbers or markers). */
  options: (lines: string[]) => string[];
  /** Keys that allow (yes, allow once, trust). */
  approve: string[];
  /** Keys that refuse (no, reject, continue without trusting). */
  deny: string[];
  /** Keys that pick option `n` (1-based) of a freshly drawn dialog. */
  pick: (n: number) => string[];
}

/** A dialog on screen: its id and its options. */
export interface DialogFound {
  /** Short and stable while the same dialog stays up: FNV-1a of its rule, text, options and turn. */
  id: string;
  options: string[];
}

/** FNV-1a (32-bit) as 8 hex digits (ptywright's helpers.lua `fnv1a_hex`). */
export function fnv1aHex(s: string): string {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(s)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/** The dialog's identity: what it asks, what it offers, and the turn it belongs to. */
export function dialogId(
  parts: { rule: string; message: string | null; options: string[]; turn: string },
): string {
  return fnv1aHex([parts.rule, parts.message ?? "", ...parts.options, parts.turn].join("\n"));
}

const NUMBERED = /^[\s│┃]*(?:[›❯●>]\s*)?(\d+)\.\s+(.*?)[\s│┃]*$/;

/**
 * Numbered options (`› 1. Yes`, `│ ● 2. Allow for this session │`) on the
 * lines after the last line `question` matches; [] when there is none.
 */
export function numberedOptions(lines: string[], question: RegExp): string[] {
  const q = lines.findLastIndex((l) => question.test(l));
  if (q < 0) return [];
  const out: string[] = [];
  for (const line of lines.slice(q + 1)) {
    const m = NUMBERED.exec(line);
    // A long label may wrap onto the next line: only the numbers in sequence count.
    if (m && Number(m[1]) === out.length + 1) out.push(m[2]);
  }
  return out;
}

/** What an answer resolved to: the keys to press and the option it picked, if it named one. */
export interface ResolvedAnswer {
  keys: string[];
  /** The option's label when the answer named an option (by number or label); null for approve/deny. */
  option: string | null;
}

/**
 * Resolves `answer` (`approve`, `deny`, an option's number, or its label or
 * part of it, case-insensitive) against a dialog; throws an Error whose
 * message names the answer and the options when nothing matches.
 */
export function resolveAnswer(spec: DialogSpec, options: string[], answer: string): ResolvedAnswer {
  const a = answer.trim();
  const lc = a.toLowerCase();
  if (lc === "approve") return { keys: spec.approve, option: null };
  if (lc === "deny") return { keys: spec.deny, option: null };
  const listed = options.length
    ? options.map((o, i) => `${i + 1}. ${JSON.stringify(o)}`).join(", ")
    : "none read from the screen";
  if (/^\d+$/.test(a)) {
    const n = Number(a);
    if (n < 1 || n > options.length) {
      throw new Error(`Option ${n} is not one of the dialog's options (${listed})`);
    }
    return { keys: spec.pick(n), option: options[n - 1] };
  }
  const exact = options.findIndex((o) => o.toLowerCase() === lc);
  const partial = options.map((o, i) => (o.toLowerCase().includes(lc) ? i : -1)).filter((i) => i >= 0);
  const i = exact >= 0 ? exact : partial.length === 1 ? partial[0] : -1;
  if (i < 0) {
    const why = partial.length > 1 ? "matches several" : "matches none";
    throw new Error(
      `Answer ${JSON.stringify(a)} ${why} of the dialog's options (${listed}); ` +
        'answer "approve", "deny", an option\'s number or its label',
    );
  }
  return { keys: spec.pick(i + 1), option: options[i] };
}
