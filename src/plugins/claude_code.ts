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
 * Here: the plugin's state, the intents that read or keep it, and classify in
 * its phases (the adapter's own dialogs, then the shared rules' verdict mapped
 * to a state, then the turn's bookkeeping at the prompt). The manifest, the
 * catalog `describe()` lists, the other intents and the wait matchers are
 * claude_code_catalog.ts; reading the screen beyond the shared rules is
 * claude_code_screen.ts.
 *
 * @module
 */
import { classifyScreen, type ScreenVerdict } from "../agents/classify.ts";
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
import {
  describe,
  key,
  type Params,
  PLANS,
  str,
  text,
  waitCancelSettledMatcher,
  waitTurnMatcher,
} from "./claude_code_catalog.ts";
import { PluginFailure } from "./errors.ts";
import type { PluginRuntime } from "./runtime.ts";
import type { ActionPlan, ClassifyContext, PlanAction } from "./types.ts";

export { fnv1aHex, redactSecrets } from "./claude_code_screen.ts";
export { CLAUDE_CODE_MANIFEST } from "./claude_code_catalog.ts";

/** A classified state, as `classify` returns it. */
type Snapshot = Record<string, unknown>;

/** Makes one classify call's snapshots: its sequence, and the status metadata every state carries. */
type Out = (state: string, confidence: number, evidence: string, extra?: Record<string, unknown>) => Snapshot;

function snapshots(sequence: number, meta: Record<string, unknown>): Out {
  return (state, confidence, evidence, extra = {}) => {
    const metadata = { ...meta, ...extra };
    return {
      sequence,
      candidates: [],
      state,
      confidence,
      evidence,
      ...(Object.keys(metadata).length ? { metadata } : {}),
    };
  };
}

/** One claude-code adapter instance; keeps the last dialog and the prompt in flight. */
export class ClaudeCodePlugin implements PluginRuntime {
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

  /** The exported functions: classify, describe, the intents, the wait matchers and their predicates. */
  readonly #fns: Record<string, (p: Params) => unknown> = {
    classify: (p) => this.classify(p as unknown as ClassifyContext),
    describe,
    ...PLANS,
    send_prompt: (p) => this.#sendPrompt(p),
    approve: (p) => this.#approve(p),
    deny: () => this.#answer([key("escape")]),
    choose_option: (p) => this.#chooseOption(p),
    cancel: () => this.#cancelWith([key("escape")]),
    force_cancel: () => this.#cancelWith([key("escape"), key("escape")]),
    wait_turn_matcher: (p) =>
      waitTurnMatcher(p, {
        prompt: this.#prompt ?? "",
        answered: this.#answered ?? "",
        ...(this.#cancel ? { cancelled: true } : {}),
      }),
    turn_settled: (p) => turnSettled(p),
    wait_cancel_settled_matcher: (p) => waitCancelSettledMatcher(p, { prompt: this.#prompt ?? "" }),
    cancel_settled: (p) => cancelSettled(p),
  };
  readonly exports: string[] = Object.keys(this.#fns).sort();

  call(fn: string, arg: unknown): unknown {
    const params = (arg && typeof arg === "object" ? arg : {}) as Params;
    try {
      if (!Object.hasOwn(this.#fns, fn)) throw new Error(`no exported function \`${fn}\``);
      return this.#fns[fn](params);
    } catch (e) {
      throw new PluginFailure(`lua plugin \`claude-code\` failed: ${(e as Error).message}`, { cause: e });
    }
  }

  close(): void {}

  /**
   * send_prompt. ptywright's plan starts with Enter (it clears the welcome
   * panel). When the input box holds a draft — Claude Code puts an
   * interrupted prompt back there — that Enter would submit the draft, so the
   * draft is cleared instead (Ctrl+U per line, Backspace joining the lines).
   */
  #sendPrompt(p: Params): ActionPlan {
    const prompt = str(p, "prompt");
    if (!prompt) return { actions: [], last_intent: "" };
    this.#prompt = prompt.split("\n")[0].trim();
    this.#cancel = null;
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
    };
  }

  /** approve: Enter on the current dialog; a `dialog_id` that is not the current dialog's is `stale_dialog`. */
  #approve(p: Params): ActionPlan {
    const want = p.dialog_id;
    if (want !== undefined && want !== null && (this.#dialogId === null || want !== this.#dialogId)) {
      throw new Error(
        `stale_dialog: dialog_id ${String(want)} does not match the current dialog (${
          this.#dialogId ?? "none"
        })`,
      );
    }
    return this.#answer([key("enter")]);
  }

  /** choose_option: the option's number, then Enter. */
  #chooseOption(p: Params): ActionPlan {
    const want = p.dialog_id;
    if (want !== undefined && want !== null && want !== this.#dialogId) {
      throw new Error(`stale_dialog: dialog_id ${String(want)} does not match the current dialog`);
    }
    const index = this.#optionIndex(p);
    if (this.#options.length && (index < 1 || index > this.#options.length)) {
      throw new Error(`option ${index} is outside the current option range 1..${this.#options.length}`);
    }
    return this.#answer([text(String(index)), key("enter")]);
  }

  /** The option `index`, or `option` as a number, a numeral or a label (an exact match before a substring). */
  #optionIndex(p: Params): number {
    if (typeof p.index === "number") return p.index;
    if (typeof p.option === "number") return p.option;
    if (typeof p.option !== "string") throw new Error("choose_option needs `index` or `option`");
    const o = p.option.trim();
    if (/^\d+$/.test(o)) return Number(o);
    const lc = o.toLowerCase();
    const exact = this.#options.findIndex((x) => x.toLowerCase() === lc);
    const i = exact >= 0 ? exact : this.#options.findIndex((x) => x.toLowerCase().includes(lc));
    if (i < 0) throw new Error(`no option matches "${o}"`);
    return i + 1;
  }

  /** A plan that answers the current dialog (remembered, so a wait does not end on it). */
  #answer(actions: PlanAction[]): ActionPlan {
    this.#answered = this.#dialogId;
    return { actions };
  }

  #cancelWith(actions: PlanAction[]): ActionPlan {
    this.#cancel = "pending";
    return { actions, last_intent: "cancelling" };
  }

  /** classify(ctx): the state of the screen. */
  classify(ctx: ClassifyContext): Snapshot {
    const screen = ctx.screen ?? "";
    const lines = screen.split("\n");
    const status = statusOf(lines);
    const out = snapshots(ctx.sequence, status ? { status } : {});
    if (!screen.trim()) return out("starting", 0.3, "no screen evidence yet");
    return this.#adapterDialog(lines, ctx, out) ?? this.#byRules(screen, lines, ctx, out);
  }

  /** Dialogs the shared rules do not model: the adapter can answer them. */
  #adapterDialog(lines: string[], ctx: ClassifyContext, out: Out): Snapshot | null {
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
    return null;
  }

  /** Everything else: the rules `status`/`ps` use (src/agents/claude_screen.ts), mapped to states. */
  #byRules(screen: string, lines: string[], ctx: ClassifyContext, out: Out): Snapshot {
    const verdict = classifyScreen(CLAUDE_SCREEN, screen);
    this.#draft = claudeComposer(lines) || null;
    if (verdict?.rule !== "permission_dialog") {
      this.#dialogId = null;
      this.#options = [];
    }
    if (!verdict) return noRule(screen, ctx, out);
    const transcript = claudeRegions(lines).transcript;
    const cancelling = ctx.last_intent === "cancelling";
    // Esc before any answer puts the prompt back in the input box and takes its turn off the
    // transcript, so the last turn on screen is an older one: its error banner is not this turn's.
    const olderError = verdict.rule === "api_error" && cancelling &&
      !this.#ownTurn(transcript)?.some((l) => ERROR_LINE.test(l));
    switch (olderError ? "idle_prompt" : verdict.rule) {
      case "permission_dialog":
        return this.#permission(lines, out);
      case "busy":
      case "busy_spinner":
      case "busy_unfinished":
        return this.#busy(transcript, cancelling, out);
      case "api_error":
        return errorState(verdict.message ?? "", out);
      default:
        return this.#atPrompt(screen, verdict, transcript, ctx, out);
    }
  }

  #permission(lines: string[], out: Out): Snapshot {
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

  /** A work indicator: the turn in flight (with the text it has so far), or a cancel not yet settled. */
  #busy(transcript: string[], cancelling: boolean, out: Out): Snapshot {
    if (cancelling && this.#cancel !== "settled") {
      return out("cancelling", 0.7, "cancel intent recently applied; work indicator still visible");
    }
    const partial = this.#ownTurn(transcript);
    return out(
      "thinking",
      0.76,
      "active work indicator detected",
      partial ? { turn: { partial_text: redactSecrets(turnText(partial)) } } : {},
    );
  }

  /**
   * The input prompt with no work in flight: a cancel settling, the submitted
   * turn's end (or not yet), or waiting for input.
   */
  #atPrompt(screen: string, verdict: ScreenVerdict, transcript: string[], ctx: ClassifyContext, out: Out) {
    const settled = ctx.stable_ms !== undefined && ctx.stable_ms >= ctx.completed_turn_stable_ms;
    // A cancel has settled after a wait's stability window or, when no wait
    // measured one (`adapter.state` / `adapter.send` leave `stable_ms` out), once the
    // screen shows the turn unwound: the `cancel_settled` predicate's evidence.
    if (ctx.last_intent === "cancelling" && this.#cancel !== "settled") {
      if (!settled && !cancelSettled({ screen, params: { prompt: this.#prompt ?? "" } })) {
        return out("cancelling", 0.7, "cancel intent recently applied; waiting for the screen to settle");
      }
      this.#cancel = "settled";
    }
    if (ctx.last_intent === "prompt_submitted") {
      return this.#turnState(verdict, transcript, ctx, settled, out);
    }
    return out("waiting_for_user_input", 0.62, "input prompt glyph detected");
  }

  /**
   * After `send_prompt`, at the prompt: `completed_turn` with the turn's text
   * once the submitted prompt's turn ended (a completion marker, `Interrupted`,
   * or a stable screen), `error` for an error in that turn, else `thinking`.
   */
  #turnState(verdict: ScreenVerdict, transcript: string[], ctx: ClassifyContext, settled: boolean, out: Out) {
    const turn = this.#ownTurn(transcript);
    const inFlight = () => out("thinking", 0.6, "turn in flight; no accepted completion marker on screen");
    if (!turn) return inFlight();
    const done = turn.some((l) => MARKER.test(l.trim()));
    const errorLine = turn.find((l) => ERROR_LINE.test(l));
    if (errorLine && !done) return errorState(errorLine.replace(/^[\s●⎿]+/, "").trim(), out);
    if (!settled && !done && verdict.rule !== "interrupted") return inFlight();
    const ended = { turn: { text: redactSecrets(turnText(turn)) }, ...turnSpan(ctx) };
    const snapshot = settled
      ? out("completed_turn", 0.78, "stable input prompt after prompt submission", ended)
      : out("completed_turn", 0.7, "completion marker plus input prompt visible without active work", ended);
    // The first completed_turn after `turn_start` marks `turn_end` (once).
    const marks = ctx.markers?.turn_start !== undefined && ctx.markers?.turn_end === undefined
      ? { host_marks: [{ label: "turn_end" }] }
      : {};
    return { ...snapshot, ...marks };
  }

  /** The last turn's lines when it is the turn of the prompt submitted last. */
  #ownTurn(transcript: string[]): string[] | null {
    return this.#prompt ? ownTurn(transcript, this.#prompt) : null;
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

/** No shared rule matched: the welcome screen, the banner before the prompt, or nothing known. */
function noRule(screen: string, ctx: ClassifyContext, out: Out): Snapshot {
  if (/Welcome to Claude Code|Ready to code\?|Welcome back/.test(screen)) {
    return out("starting", 0.7, "welcome screen visible");
  }
  if (/Claude Code v\d/.test(screen) && !/❯/.test(screen)) {
    return out("starting", 0.5, "Claude Code banner visible; no input prompt yet");
  }
  return out(ctx.last_intent || "ready", 0.2, "no Claude Code-specific evidence detected");
}

function errorState(message: string, out: Out): Snapshot {
  return out("error", 0.72, "visible error banner detected", {
    error: { kind: errorKind(message), message: redactSecrets(message) },
  });
}

/** `metadata.transcript`: the turn's span in the transcript, once `turn_start` is marked. */
function turnSpan(ctx: ClassifyContext) {
  if (ctx.markers?.turn_start === undefined) return {};
  return { transcript: { turn_start: ctx.markers.turn_start, turn_end: ctx.markers.turn_end ?? ctx.cursor } };
}

/** `metadata.status`: the model (header) and the permission mode (footer). */
function statusOf(lines: string[]): Record<string, string> | null {
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
