/**
 * The screen classifier: ordered rules (data, one module per agent) tested
 * against a pane's visible screen. The first rule that matches wins.
 *
 * @module
 */
import { type DialogFound, dialogId, type DialogSpec } from "./dialog.ts";

/** Agent states (docs/agents.md). */
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
  /** Only look at this region of the screen (see {@link ScreenRules.regions}); default the whole screen. */
  region?: string;
  /** Builds the `message` (e.g. a dialog's question) from the screen lines. */
  message?: (lines: string[]) => string | null;
  /** Why this rule means this state, for `explain`. */
  note: string;
  /** The screen shows a dialog the user answers: its options and keys (`surface.answer`). */
  dialog?: DialogSpec;
}

/** The screen rules of one agent family and the version they were captured from. */
export interface ScreenRules {
  family: string;
  version: string;
  /** Splits the screen into named regions (e.g. the last turn, the input box, the status line). */
  regions?: (lines: string[]) => Record<string, string[]>;
  /**
   * A digest of what counts as activity on screen (the transcript without
   * animated spinner lines); a change is progress, for stall detection.
   */
  activity?: (lines: string[]) => string;
  /** The text in the agent's input box, or null when none is shown. */
  composer?: (lines: string[]) => string | null;
  rules: ScreenRule[];
}

/** What the screen says. */
export interface ScreenVerdict {
  rule: string;
  state: AgentState;
  message: string | null;
  note: string;
  /** The dialog the rule found (rules with a `dialog`), with its id and options; else null. */
  dialog: DialogFound | null;
}

/** Classifies a screen; null when no rule matches. */
export function classifyScreen(rules: ScreenRules, screen: string): ScreenVerdict | null {
  const lines = screen.split("\n");
  const regions = rules.regions?.(lines) ?? {};
  for (const rule of rules.rules) {
    const region = rule.region ? regions[rule.region] ?? [] : lines;
    if (rule.pattern.test(region.join("\n"))) {
      const message = rule.message ? rule.message(region) : null;
      let dialog: DialogFound | null = null;
      if (rule.dialog) {
        const options = rule.dialog.options(region);
        const turn = regions.last_turn?.[0] ?? "";
        dialog = { id: dialogId({ rule: rule.id, message, options, turn }), options };
      }
      return { rule: rule.id, state: rule.state, message, note: rule.note, dialog };
    }
  }
  return null;
}
