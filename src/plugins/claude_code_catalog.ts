/**
 * The claude-code adapter's catalog: its manifest, what `describe()` lists
 * (16 intents, two wait matchers, 16 states), the intents whose action plans
 * need nothing the adapter remembers, and the two wait matchers. The intents
 * that read or keep state (send_prompt, approve, deny, choose_option, cancel,
 * force_cancel) are the plugin's own (claude_code.ts).
 *
 * @module
 */
import { type Manifest, PERMISSIONS } from "./manifest.ts";
import type { ActionPlan, PlanAction } from "./types.ts";
import { VERSION } from "../spec/codes.ts";

/** The built-in manifest (plugins/claude-code/manifest.toml in ptywright). */
export const CLAUDE_CODE_MANIFEST: Manifest = {
  name: "claude-code",
  kind: "adapter",
  version: VERSION,
  runtime: "lua",
  entrypoint: "main.lua",
  // Every permission there is (the catalog's manifest declares them all).
  permissions: [...PERMISSIONS],
  default_target: {
    program: "claude",
    rows: 60,
    cols: 200,
    env: {
      CLAUDE_CODE_SKIP_PROMPT_HISTORY: "1",
      CLAUDE_CODE_DISABLE_MOUSE: "1",
      CLAUDE_CODE_DISABLE_BACKGROUND_TASKS: "1",
      CLAUDE_CODE_DISABLE_MESSAGE_ACTIONS: "1",
      CLAUDE_CODE_DISABLE_ATTACHMENTS: "1",
      CLAUDE_CODE_SYNTAX_HIGHLIGHT: "0",
      CLAUDE_CODE_ACCESSIBILITY: "1",
      CLAUDE_CODE_NO_FLICKER: "0",
      NO_COLOR: "1",
      FORCE_COLOR: "0",
    },
    required_env: {
      CLAUDE_CODE_DISABLE_TERMINAL_TITLE: "1",
      CLAUDE_CODE_DISABLE_VIRTUAL_SCROLL: "1",
    },
  },
};

const INTENTS: [string, string][] = [
  ["send_prompt", "Type the prompt and press Enter; marks the turn start"],
  ["steer", "Bracketed-paste a prompt mid-turn and press Enter"],
  ["attach_file", "Bracketed-paste a file path into the prompt, no Enter"],
  ["approve", "Press Enter on the current permission / plan dialog (dialog_id guards staleness)"],
  ["deny", "Press Escape on the current dialog"],
  ["choose_option", "Pick a numbered option by index or label"],
  ["approve_trust", "Type 1 + Enter on the workspace-trust dialog"],
  ["deny_trust", "Type 2 + Enter on the workspace-trust dialog"],
  ["dismiss_welcome", "Press Enter to clear the welcome panel"],
  ["expand", "Ctrl+O: expand or collapse the focused tool row"],
  ["model_effort_left", "Left in the model picker's effort control"],
  ["model_effort_right", "Right in the model picker's effort control"],
  ["slash_command", "Type a slash command and press Enter"],
  ["cancel", "Escape: interrupt the turn"],
  ["force_cancel", "Escape twice: interrupt a tool call in flight"],
  ["key", "A named key, or any other string typed verbatim"],
];

const STATES: [string, string][] = [
  ["starting", "Claude Code is drawing its first screen or the welcome panel"],
  ["ready", "Nothing Claude Code-specific on screen yet"],
  ["waiting_for_login", "A login / sign-in dialog"],
  ["waiting_for_trust", "The workspace-trust dialog"],
  ["waiting_for_model_select", "The model picker"],
  ["waiting_for_enter_plan_mode", "Claude asks to enter plan mode"],
  ["waiting_for_plan_approval", "A plan waits for approval"],
  ["waiting_for_permission", "A tool-permission dialog (metadata.permission)"],
  ["waiting_for_external_editor", "Claude waits for an external editor to close"],
  ["usage_screen", "The /usage panel"],
  ["local_ui_screen", "Another local panel (/help, /config, ...)"],
  ["waiting_for_user_input", "The input prompt, no turn in flight"],
  ["thinking", "A turn is in flight"],
  ["cancelling", "A cancel was sent and the screen has not settled"],
  ["completed_turn", "The submitted turn finished (metadata.turn.text)"],
  ["error", "An API error banner ended the turn (metadata.error.kind)"],
];

/** `describe()`: the catalog as ptywright's `plugin.describe` passes it through. */
export function describe() {
  return {
    intents: INTENTS.map(([name, description]) => ({ name, description })),
    wait_matchers: [
      { name: "wait_turn_matcher", description: "A turn boundary anchor, then a stable screen" },
      { name: "wait_cancel_settled_matcher", description: "A stable screen after a cancel" },
    ],
    states: STATES.map(([name, description]) => ({ name, description })),
  };
}

const KEYS = new Set([
  "enter",
  "escape",
  "tab",
  "shift_tab",
  "backspace",
  "delete",
  "space",
  "up",
  "down",
  "right",
  "left",
  "home",
  "end",
  "page_up",
  "page_down",
  "insert",
  ..."abcdefgklnopqrstuvwxyz".split("").map((c) => `ctrl_${c}`),
  ...Array.from({ length: 12 }, (_, i) => `f${i + 1}`),
]);
const KEY_ALIASES: Record<string, string> = { esc: "escape", return: "enter", ret: "enter", del: "delete" };

/** An intent's or matcher's parameters, as the host passes them. */
export type Params = Record<string, unknown>;

/** A key action. */
export const key = (value: string): PlanAction => ({ type: "key", value });
/** A text action. */
export const text = (value: string): PlanAction => ({ type: "text", value });
/** The string parameter `k`, or "" when it is missing or not a string. */
export const str = (p: Params, k: string): string => (typeof p[k] === "string" ? p[k] as string : "");

/** The intents whose plans depend on their parameters alone. */
export const PLANS: Record<string, (p: Params) => ActionPlan> = {
  steer: (p) => {
    const prompt = str(p, "prompt");
    return prompt ? { actions: [{ type: "bracketed_paste", value: prompt }, key("enter")] } : { actions: [] };
  },
  slash_command: (p) => {
    let name = str(p, "command") || str(p, "name");
    if (!name) return { actions: [] };
    if (!name.startsWith("/")) name = `/${name}`;
    const actions: PlanAction[] = p.dismiss_welcome ? [key("enter")] : [];
    actions.push({ type: "stream_text", value: { text: name } }, key("enter"));
    return { actions };
  },
  approve_trust: () => ({ actions: [text("1"), key("enter")] }),
  deny_trust: () => ({ actions: [text("2"), key("enter")] }),
  dismiss_welcome: () => ({ actions: [key("enter")] }),
  expand: () => ({ actions: [key("ctrl_o")] }),
  model_effort_left: () => ({ actions: [key("left")] }),
  model_effort_right: () => ({ actions: [key("right")] }),
  key: (p) => {
    const raw = str(p, "key");
    if (!raw) throw new Error("key is required");
    const name = raw.toLowerCase().replaceAll("-", "_");
    const k = KEY_ALIASES[name] ?? name;
    return { actions: [KEYS.has(k) ? key(k) : text(raw)] };
  },
  attach_file: (p) => {
    const path = str(p, "path");
    if (!path) throw new Error("path is required");
    if (/[\r\n]/.test(path)) throw new Error("path must not contain newlines");
    return { actions: [{ type: "bracketed_paste", value: path }] };
  },
};

const stableMs = (
  p: Params,
) => (typeof p.completed_turn_stable_ms === "number" ? p.completed_turn_stable_ms : 300);

/** A `lua` matcher on one of the plugin's own predicates. */
const predicate = (name: string, params: Params) => ({
  type: "lua",
  value: { plugin: "claude-code", predicate: name, params },
});

/**
 * `wait_turn_matcher`: the `turn_settled` predicate (or `Total cost:`, kept
 * for non-Claude programs), then a stable screen. ptywright's anchors (a
 * dialog's text, the prompt plus a `✻ <Verb> for Ns` line) fire on the screen
 * from before the input: Claude Code 2.1.328 in accessibility mode does not
 * animate while it waits for the API, so the previous turn's marker, or a
 * dialog just answered, can sit still for 300 ms. The predicate asks the same
 * questions of the turn in flight (its prompt on screen; a dialog other than
 * the one answered; after a cancel, the turn unwound as `cancel_settled` sees
 * it, since a prompt cancelled before its answer leaves the transcript).
 */
export function waitTurnMatcher(p: Params, turn: Params) {
  return {
    type: "all",
    value: [
      {
        type: "any",
        value: [predicate("turn_settled", turn), { type: "contains_text", value: "Total cost:" }],
      },
      { type: "screen_stable", value: { min_ms: stableMs(p) } },
    ],
  };
}

/**
 * `wait_cancel_settled_matcher`: ptywright's is screen_stable alone. A busy
 * screen that does not animate (accessibility mode) is stable too, so the
 * `cancel_settled` predicate must hold as well: the work indicator is gone.
 */
export function waitCancelSettledMatcher(p: Params, turn: Params) {
  return {
    type: "all",
    value: [predicate("cancel_settled", turn), { type: "screen_stable", value: { min_ms: stableMs(p) } }],
  };
}
