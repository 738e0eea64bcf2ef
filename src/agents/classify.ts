/**
 * The screen classifier: ordered rules (data, one module per agent) tested
 * against a pane's visible screen. The first rule that matches wins.
 *
 * @module
 */

/** Agent states (seed 000). */
export type AgentState =
  | "thinking"
  | "waiting_for_input"
  | "finished"
  | "errored"
  | "stalled"
  | "idle"
  | "unknown_running";

/** One screen rule. */
export interface ScreenRule {
  /** Stable id, shown by `paneflow explain`. */
  id: string;
  state: AgentState;
  /** Matched against the screen text (lines joined with "\n"). */
  pattern: RegExp;
  /** Only look at the last N non-blank lines of the screen. */
  within?: number;
  /** Builds the `message` (e.g. a dialog's question) from the screen lines. */
  message?: (lines: string[]) => string | null;
  /** Why this rule means this state, for `explain`. */
  note: string;
}

/** The screen rules of one agent family and the version they were captured from. */
export interface ScreenRules {
  family: string;
  version: string;
  rules: ScreenRule[];
}

/** What the screen says. */
export interface ScreenVerdict {
  rule: string;
  state: AgentState;
  message: string | null;
  note: string;
}

/** Classifies a screen; null when no rule matches. */
export function classifyScreen(rules: ScreenRules, screen: string): ScreenVerdict | null {
  const lines = screen.split("\n");
  const nonBlank = lines.filter((l) => l.trim() !== "");
  for (const rule of rules.rules) {
    const text = rule.within ? nonBlank.slice(-rule.within).join("\n") : screen;
    if (rule.pattern.test(text)) {
      return {
        rule: rule.id,
        state: rule.state,
        message: rule.message ? rule.message(lines) : null,
        note: rule.note,
      };
    }
  }
  return null;
}
