/**
 * The built-in claude-code adapter: ptywright's catalog (16 intents with
 * their exact action plans, two wait matchers, 16 states, evidence strings,
 * confidences and metadata) for Claude Code 2.1.328.
 *
 * Written in TypeScript behind the same {@link PluginRuntime} interface a
 * Lua plugin implements (the registry, adapters and `plugin.describe` see no
 * difference), because the screen knowledge must have one source: the
 * adapter's classifier starts from the verdict of `src/agents/claude_screen.ts`
 * (the rules `status`/`ps` use, captured from the real CLI) and only adds what
 * those rules do not model (dialogs the adapter can answer: trust, login,
 * model picker, plan mode, usage; and turn bookkeeping: whether the idle
 * prompt ends *this* turn). A Lua copy would have to re-encode those rules and
 * drift; importing them is the point.
 *
 * @module
 */
import { classifyScreen } from "../agents/classify.ts";
import { CLAUDE_SCREEN, claudeComposer, claudeRegions } from "../agents/claude_screen.ts";
import {
  cancelSettled,
  ERROR_LINE,
  errorKind,
  fnv1aHex,
  MARKER,
  OPTION,
  ownTurn,
  permissionDialog,
  redactSecrets,
  RULE,
  turnSettled,
  turnText,
} from "./claude_code_screen.ts";

export { fnv1aHex, redactSecrets } from "./claude_code_screen.ts";
import { type Manifest, PERMISSIONS } from "./manifest.ts";
import { PluginFailure } from "./errors.ts";
import type { PluginRuntime } from "./runtime.ts";
import type { ActionPlan, ClassifyContext, PlanAction } from "./types.ts";
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

const key = (value: string): PlanAction => ({ type: "key", value });
const text = (value: string): PlanAction => ({ type: "text", value });

/** One claude-code adapter instance; keeps the last dialog and the prompt in flight. */
export class ClaudeCodePlugin implements PluginRuntime {
  readonly exports: string[] = [
    "classify",
    "describe",
    ...INTENTS.map(([n]) => n),
    "wait_turn_matcher",
    "wait_cancel_settled_matcher",
    "turn_settled",
    "cancel_settled",
  ].sort();
  /** The text in the input box at the last classify (null: none shown). */
  #draft: string | null = null;
  /** The dialog the last approve / deny / choose_option answered. */
  #answered: string | null = null;
  #dialogId: string | null = null;
  #options: string[] = [];
  /** The first line of the prompt submitted last, to find its turn on screen. */
  #prompt: string | null = null;
  /**
   * The last cancel since the last prompt: `pending` until classify sees the
   * turn unwound, then `settled`; null when no cancel followed the prompt.
   */
  #cancel: "pending" | "settled" | null = null;

  call(fn: string, arg: unknown): unknown {
    const params = (arg && typeof arg === "object" ? arg : {}) as Record<string, unknown>;
    try {
      return this.#dispatch(fn, params);
    } catch (e) {
      throw new PluginFailure(`lua plugin \`claude-code\` failed: ${(e as Error).message}`);
    }
  }

  close(): void {}

  #dispatch(fn: string, p: Record<string, unknown>): unknown {
    const str = (k: string) => (typeof p[k] === "string" ? p[k] as string : "");
    switch (fn) {
      case "classify":
        return this.classify(p as unknown as ClassifyContext);
      case "describe":
        return {
          intents: INTENTS.map(([name, description]) => ({ name, description })),
          wait_matchers: [
            { name: "wait_turn_matcher", description: "A turn boundary anchor, then a stable screen" },
            { name: "wait_cancel_settled_matcher", description: "A stable screen after a cancel" },
          ],
          states: STATES.map(([name, description]) => ({ name, description })),
        };
      case "send_prompt": {
        const prompt = str("prompt");
        if (!prompt) return { actions: [], last_intent: "" };
        this.#prompt = prompt.split("\n")[0].trim();
        this.#cancel = null;
        // ptywright's plan starts with Enter (it clears the welcome panel). When the
        // input box holds a draft — Claude Code puts an interrupted prompt back
        // there — that Enter would submit the draft, so the draft is cleared
        // instead (Ctrl+U per line, Backspace joining the lines).
        const lines = this.#draft ? this.#draft.split("\n").length : 0;
        const clear: PlanAction[] = [];
        for (let i = 0; i < lines; i++) clear.push(...(i ? [key("backspace")] : []), key("ctrl_u"));
        return {
          actions: [
            ...(lines ? clear : [key("enter")]),
            { type: "mark_transcript", value: { label: "turn_start" } },
            { type: "stream_text", value: { text: prompt } },
            key("enter"),
            key("enter"),
          ],
          last_intent: "prompt_submitted",
        } satisfies ActionPlan;
      }
      case "steer": {
        const prompt = str("prompt");
        if (!prompt) return { actions: [] };
        return { actions: [{ type: "bracketed_paste", value: prompt }, key("enter")] };
      }
      case "slash_command": {
        let name = str("command") || str("name");
        if (!name) return { actions: [] };
        if (!name.startsWith("/")) name = `/${name}`;
        const actions: PlanAction[] = p.dismiss_welcome ? [key("enter")] : [];
        actions.push({ type: "stream_text", value: { text: name } }, key("enter"));
        return { actions };
      }
      case "approve": {
        const want = p.dialog_id;
        if (want !== undefined && want !== null && (this.#dialogId === null || want !== this.#dialogId)) {
          throw new Error(
            `stale_dialog: dialog_id ${String(want)} does not match the current dialog (${
              this.#dialogId ?? "none"
            })`,
          );
        }
        this.#answered = this.#dialogId;
        return { actions: [key("enter")] };
      }
      case "deny":
        this.#answered = this.#dialogId;
        return { actions: [key("escape")] };
      case "choose_option": {
        const want = p.dialog_id;
        if (want !== undefined && want !== null && want !== this.#dialogId) {
          throw new Error(`stale_dialog: dialog_id ${String(want)} does not match the current dialog`);
        }
        let index: number | null = null;
        if (typeof p.index === "number") index = p.index;
        else if (typeof p.option === "number") index = p.option;
        else if (typeof p.option === "string") {
          const o = p.option.trim();
          if (/^\d+$/.test(o)) index = Number(o);
          else {
            const lc = o.toLowerCase();
            const exact = this.#options.findIndex((x) => x.toLowerCase() === lc);
            const sub = this.#options.findIndex((x) => x.toLowerCase().includes(lc));
            const i = exact >= 0 ? exact : sub;
            if (i < 0) throw new Error(`no option matches "${o}"`);
            index = i + 1;
          }
        }
        if (index === null) throw new Error("choose_option needs `index` or `option`");
        if (this.#options.length && (index < 1 || index > this.#options.length)) {
          throw new Error(`option ${index} is outside the current option range 1..${this.#options.length}`);
        }
        this.#answered = this.#dialogId;
        return { actions: [text(String(index)), key("enter")] };
      }
      case "approve_trust":
        return { actions: [text("1"), key("enter")] };
      case "deny_trust":
        return { actions: [text("2"), key("enter")] };
      case "dismiss_welcome":
        return { actions: [key("enter")] };
      case "expand":
        return { actions: [key("ctrl_o")] };
      case "model_effort_left":
        return { actions: [key("left")] };
      case "model_effort_right":
        return { actions: [key("right")] };
      case "cancel":
        this.#cancel = "pending";
        return { actions: [key("escape")], last_intent: "cancelling" };
      case "force_cancel":
        this.#cancel = "pending";
        return { actions: [key("escape"), key("escape")], last_intent: "cancelling" };
      case "key": {
        const raw = str("key");
        if (!raw) throw new Error("key is required");
        const name = raw.toLowerCase().replaceAll("-", "_");
        const k = KEY_ALIASES[name] ?? name;
        return { actions: [KEYS.has(k) ? key(k) : text(raw)] };
      }
      case "attach_file": {
        const path = str("path");
        if (!path) throw new Error("path is required");
        if (/[\r\n]/.test(path)) throw new Error("path must not contain newlines");
        return { actions: [{ type: "bracketed_paste", value: path }] };
      }
      case "wait_turn_matcher": {
        // ptywright's anchors (a dialog's text, the prompt plus a `✻ <Verb> for Ns`
        // line) fire on the screen from before the input: Claude Code 2.1.328 in
        // accessibility mode does not animate while it waits for the API, so the
        // previous turn's marker, or a dialog just answered, can sit still for
        // 300 ms. The `turn_settled` predicate asks the same questions of the
        // turn in flight (its prompt on screen; a dialog other than the one
        // answered; after a cancel, the turn unwound as `cancel_settled` sees
        // it, since a prompt cancelled before its answer leaves the transcript).
        // `Total cost:` stays for non-Claude programs.
        const ms = typeof p.completed_turn_stable_ms === "number" ? p.completed_turn_stable_ms : 300;
        return {
          type: "all",
          value: [
            {
              type: "any",
              value: [
                {
                  type: "lua",
                  value: {
                    plugin: "claude-code",
                    predicate: "turn_settled",
                    params: {
                      prompt: this.#prompt ?? "",
                      answered: this.#answered ?? "",
                      ...(this.#cancel ? { cancelled: true } : {}),
                    },
                  },
                },
                { type: "contains_text", value: "Total cost:" },
              ],
            },
            { type: "screen_stable", value: { min_ms: ms } },
          ],
        };
      }
      case "turn_settled":
        return turnSettled(
          p as { screen?: string; params?: { prompt?: string; answered?: string; cancelled?: boolean } },
        );
      case "wait_cancel_settled_matcher": {
        // ptywright: screen_stable alone. A busy screen that does not animate
        // (accessibility mode) is stable too, so the work indicator must be gone.
        const ms = typeof p.completed_turn_stable_ms === "number" ? p.completed_turn_stable_ms : 300;
        return {
          type: "all",
          value: [
            {
              type: "lua",
              value: {
                plugin: "claude-code",
                predicate: "cancel_settled",
                params: { prompt: this.#prompt ?? "" },
              },
            },
            { type: "screen_stable", value: { min_ms: ms } },
          ],
        };
      }
      case "cancel_settled":
        return cancelSettled(p as { screen?: string; params?: { prompt?: string } });
      default:
        throw new Error(`no exported function \`${fn}\``);
    }
  }

  /** classify(ctx): the state of the screen. */
  classify(ctx: ClassifyContext): Record<string, unknown> {
    const screen = ctx.screen ?? "";
    const lines = screen.split("\n");
    const seq = ctx.sequence;
    const base = {
      sequence: seq,
      candidates: [] as unknown[],
    };
    const meta: Record<string, unknown> = {};
    const status = this.#status(lines);
    if (status) meta.status = status;
    const out = (
      state: string,
      confidence: number,
      evidence: string,
      extra: Record<string, unknown> = {},
    ) => {
      const metadata = { ...meta, ...extra };
      return { ...base, state, confidence, evidence, ...(Object.keys(metadata).length ? { metadata } : {}) };
    };
    if (!screen.trim()) return out("starting", 0.3, "no screen evidence yet");

    // Dialogs the shared rules do not model: the adapter can answer them.
    const bottom = lines.slice(-30).join("\n");
    if (/Press Enter to log in|Log in to Claude Code|Select login method|Paste code here/i.test(bottom)) {
      const url = /https:\/\/\S+/.exec(bottom)?.[0];
      return out("waiting_for_login", 0.8, "login / sign-in dialog detected", url ? { login: { url } } : {});
    }
    if (/Do you trust the files|Yes, I trust this folder|Accessing workspace/.test(bottom)) {
      return out("waiting_for_trust", 0.84, "workspace trust dialog detected");
    }
    if (/Select a model:|Switch to model:|Select model/.test(bottom)) {
      return out("waiting_for_model_select", 0.8, "model picker dialog detected");
    }
    if (/Save and close editor to continue/.test(bottom)) {
      return out("waiting_for_external_editor", 0.8, "external editor wait detected");
    }
    if (/Would you like to proceed\?/.test(bottom) && /plan/i.test(bottom)) {
      const plan = this.#dialogOptions(lines);
      return out("waiting_for_plan_approval", 0.8, "plan approval text detected", {
        plan: plan.text,
        options: plan.options,
        dialog_id: plan.id,
      });
    }
    if (/Enter plan mode\?/.test(bottom)) {
      const plan = this.#dialogOptions(lines);
      return out("waiting_for_enter_plan_mode", 0.8, "enter plan mode prompt detected", {
        options: plan.options,
        dialog_id: plan.id,
      });
    }
    if (/Current session[\s\S]*% used/.test(bottom)) {
      if (ctx.stable_ms !== undefined && ctx.stable_ms >= ctx.completed_turn_stable_ms) {
        return out("completed_turn", 0.86, "stable usage screen detected");
      }
      return out("usage_screen", 0.8, "usage panel detected");
    }

    // Everything else: the rules `status`/`ps` use (src/agents/claude_screen.ts).
    const verdict = classifyScreen(CLAUDE_SCREEN, screen);
    const regions = claudeRegions(lines);
    this.#draft = claudeComposer(lines) || null;
    const cancelling = ctx.last_intent === "cancelling";
    const settled = ctx.stable_ms !== undefined && ctx.stable_ms >= ctx.completed_turn_stable_ms;
    if (verdict?.rule !== "permission_dialog") {
      this.#dialogId = null;
      this.#options = [];
    }
    if (!verdict) {
      if (/Welcome to Claude Code|Ready to code\?|Welcome back/.test(screen)) {
        return out("starting", 0.7, "welcome screen visible");
      }
      if (/Claude Code v\d/.test(screen) && !/❯/.test(screen)) {
        return out("starting", 0.5, "Claude Code banner visible; no input prompt yet");
      }
      return out(ctx.last_intent || "ready", 0.2, "no Claude Code-specific evidence detected");
    }
    // Esc before any answer puts the prompt back in the input box and takes its turn off the
    // transcript, so the last turn on screen is an older one: its error banner is not this turn's.
    const olderError = verdict.rule === "api_error" && cancelling &&
      !this.#ownTurn(regions.transcript)?.some((l) => ERROR_LINE.test(l));
    switch (olderError ? "idle_prompt" : verdict.rule) {
      case "permission_dialog": {
        const d = permissionDialog(lines)!;
        this.#dialogId = fnv1aHex(d.body);
        this.#options = d.options;
        return out("waiting_for_permission", 0.84, "permission or approval prompt text detected", {
          permission: {
            tool: redactSecrets(d.tool),
            summary: redactSecrets(d.summary),
            question: d.question,
            options: d.options,
          },
          dialog_id: this.#dialogId,
        });
      }
      case "busy":
      case "busy_spinner":
      case "busy_unfinished": {
        if (cancelling && this.#cancel !== "settled") {
          return out("cancelling", 0.7, "cancel intent recently applied; work indicator still visible");
        }
        const partial = this.#ownTurn(regions.transcript);
        return out(
          "thinking",
          0.76,
          "active work indicator detected",
          partial
            ? {
              turn: { partial_text: redactSecrets(turnText(partial)) },
            }
            : {},
        );
      }
      case "api_error": {
        const message = verdict.message ?? "";
        return out("error", 0.72, "visible error banner detected", {
          error: { kind: errorKind(message), message: redactSecrets(message) },
        });
      }
      default: {
        // The input prompt with no work in flight.
        // A cancel has settled after a wait's stability window or, when no wait
        // measured one (`adapter.state` / `adapter.send` leave `stable_ms` out), once the
        // screen shows the turn unwound: the `cancel_settled` predicate's evidence.
        if (cancelling && this.#cancel !== "settled") {
          if (!settled && !cancelSettled({ screen, params: { prompt: this.#prompt ?? "" } })) {
            return out("cancelling", 0.7, "cancel intent recently applied; waiting for the screen to settle");
          }
          this.#cancel = "settled";
        }
        if (ctx.last_intent === "prompt_submitted") {
          const turn = this.#ownTurn(regions.transcript);
          if (!turn) {
            return out("thinking", 0.6, "turn in flight; no accepted completion marker on screen");
          }
          const done = turn.some((l) => MARKER.test(l.trim()));
          const errorLine = turn.find((l) => ERROR_LINE.test(l));
          if (errorLine && !done) {
            const message = errorLine.replace(/^[\s●⎿]+/, "").trim();
            return out("error", 0.72, "visible error banner detected", {
              error: { kind: errorKind(message), message: redactSecrets(message) },
            });
          }
          const text = redactSecrets(turnText(turn));
          const marks = ctx.markers?.turn_start !== undefined && ctx.markers?.turn_end === undefined
            ? { host_marks: [{ label: "turn_end" }] }
            : {};
          const transcript = ctx.markers?.turn_start !== undefined
            ? {
              transcript: {
                turn_start: ctx.markers.turn_start,
                turn_end: ctx.markers.turn_end ?? ctx.cursor,
              },
            }
            : {};
          if (settled) {
            return {
              ...out("completed_turn", 0.78, "stable input prompt after prompt submission", {
                turn: { text },
                ...transcript,
              }),
              ...marks,
            };
          }
          if (done || verdict.rule === "interrupted") {
            return {
              ...out(
                "completed_turn",
                0.7,
                "completion marker plus input prompt visible without active work",
                {
                  turn: { text },
                  ...transcript,
                },
              ),
              ...marks,
            };
          }
          return out("thinking", 0.6, "turn in flight; no accepted completion marker on screen");
        }
        return out("waiting_for_user_input", 0.62, "input prompt glyph detected");
      }
    }
  }

  /** The last turn's lines when it is the turn of the prompt submitted last. */
  #ownTurn(transcript: string[]): string[] | null {
    return this.#prompt ? ownTurn(transcript, this.#prompt) : null;
  }

  #status(lines: string[]): Record<string, string> | null {
    const header = lines.slice(0, 6).join("\n");
    const model = /^\S*\s+(.+?) · (?:API Usage|Claude (?:Pro|Max|Team|Enterprise))/m.exec(header)?.[1]
      ?.trim();
    const footer = lines.slice(-3).join("\n");
    const mode = /⏸ (.+?) on\b/.exec(footer)?.[1] ?? (/⏵⏵ (.+?) on\b/.exec(footer)?.[1]);
    if (!model && !mode) return null;
    return {
      ...(model ? { model } : {}),
      ...(mode ? { permission_mode: mode } : { permission_mode: "default" }),
    };
  }

  #dialogOptions(lines: string[]) {
    const top = lines.findLastIndex((l) => RULE.test(l));
    const body = lines.slice(Math.max(0, top - 40));
    const options = body.map((l) => OPTION.exec(l)?.[2]).filter((o): o is string => !!o);
    const text = body.filter((l) => !OPTION.test(l)).map((l) => l.trim()).filter(Boolean).join("\n");
    const id = fnv1aHex(body.join("\n").trim());
    this.#dialogId = id;
    this.#options = options;
    return { text: redactSecrets(text), options, id };
  }
}
