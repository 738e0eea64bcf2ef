/**
 * The flow spec of `paneflow flow run` (SPEC §7, seed 000): a TOML DAG of
 * steps. Validation reports every problem at once with file, line and key,
 * before anything runs; the result is a plan of step instances (a `foreach`
 * step becomes one instance per item, `${item}` substituted).
 *
 * @module
 */
import { z } from "zod";
import {
  type Issue,
  Layout,
  type LocatedIssue,
  locateIssues,
  PaneSpec,
  type ResolvedWorkspace,
  type WorkspaceSpec,
} from "./workspace.ts";
import { checkWorkspace, formatIssue } from "./workspace.ts";
import { UsageError } from "../errors.ts";
import { type Locator, parseTomlFile } from "./toml_locate.ts";
import { EXPECTED, kindOf, suggest, valueAt } from "./_words.ts";

/** Largest number of panes one flow may spawn. */
export const PANE_BUDGET = 32;
/** Substituted text longer than this is cut with {@link TRUNCATED}. */
export const MAX_TEXT_BYTES = 64 * 1024;
/** The marker that ends truncated text. */
export const TRUNCATED = "…[truncated]";

const OnFailure = z.enum(["fail_fast", "continue"]);

/** One `[[step]]` table. */
const Step = z.strictObject({
  id: z.string().min(1),
  needs: z.array(z.string().min(1)).optional(),
  foreach: z.array(z.union([z.string().min(1), z.number()])).min(1).optional(),
  pane: PaneSpec.optional(),
  send: z.strictObject({
    target: z.string().min(1),
    text: z.string(),
    submit: z.boolean().optional(),
  }).optional(),
  ready: z.strictObject({
    pattern: z.string().min(1),
    timeout_secs: z.number().positive().optional(),
  }).optional(),
  capture: z.strictObject({
    var: z.string().regex(
      /^[A-Za-z_][A-Za-z0-9_]*$/,
      "must be a name of letters, digits and _ that does not start with a digit",
    ),
    lines: z.number().int().min(1).max(500),
  }).optional(),
  submit: z.boolean().optional(),
  message: z.strictObject({
    to: z.string().min(1),
    content: z.string(),
    from: z.string().min(1).optional(),
    type: z.enum(["task", "info", "result", "error"]).optional(),
    timeout_secs: z.number().positive().optional(),
    var: z.string().regex(
      /^[A-Za-z_][A-Za-z0-9_]*$/,
      "must be a name of letters, digits and _ that does not start with a digit",
    ).optional(),
  }).optional(),
});

type Step = z.infer<typeof Step>;

/** The flow file's schema. */
export const FlowSpec = z.strictObject({
  name: z.string().min(1).optional(),
  layout: Layout.optional(),
  defaults: z.strictObject({
    timeout_secs: z.number().positive().optional(),
    on_failure: OnFailure.optional(),
  }).optional(),
  step: z.array(Step).min(1),
});

/** A flow file after the schema check. */
export type FlowSpec = z.infer<typeof FlowSpec>;

/** One runnable instance of a step. */
export interface StepInstance {
  /** `impl`, or `check[api]` for a foreach instance. */
  key: string;
  id: string;
  /** Index of the `[[step]]` table. */
  index: number;
  item: string | null;
  /** Keys of the instances this one waits for. */
  needs: string[];
  /** A pane to spawn (`${item}` substituted; the prompt may still hold `${var}`). */
  pane: WorkspaceSpec["panes"][number] | null;
  /** Submit the pane's prompt once the program is ready. */
  submit: boolean;
  send: { target: string; text: string; submit: boolean } | null;
  ready: { pattern: string; timeout_secs: number } | null;
  capture: { var: string; lines: number } | null;
  /**
   * A message to put on the host's queue (docs/paneio.md) and wait for: its
   * result goes into `var` when given.
   */
  message: {
    to: string;
    content: string;
    from: string;
    type: "task" | "info" | "result" | "error";
    timeout_secs: number;
    var: string | null;
  } | null;
}

/** A validated flow. */
export interface FlowPlan {
  name: string;
  layout: "even_h" | "even_v" | "main_vertical" | "tiled";
  onFailure: "fail_fast" | "continue";
  /** Instances in a topological order. */
  steps: StepInstance[];
  /** Whether anything submits (needs the scripting gate). */
  submits: boolean;
  /** Capture vars: `foreach` ones map item → value. */
  captures: Record<string, { step: string; foreach: boolean }>;
}

/** The flow is invalid: carries every problem. */
export class FlowSpecError extends UsageError {
  override name = "FlowSpecError";
  constructor(readonly issues: LocatedIssue[]) {
    super(issues.map(formatIssue).join("\n"));
  }
}

const ITEM = /\$\{item\}/g;
const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:\.([^}]+))?\}/g;

/** Replaces `${item}`. */
export function withItem(text: string, item: string | null): string {
  return item === null ? text : text.replace(ITEM, item);
}

/** Cuts text over {@link MAX_TEXT_BYTES} (UTF-8) and marks it. */
export function truncate(text: string): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= MAX_TEXT_BYTES) return text;
  const room = MAX_TEXT_BYTES - new TextEncoder().encode(TRUNCATED).length;
  return new TextDecoder().decode(bytes.slice(0, room)).replace(/\uFFFD$/, "") + TRUNCATED;
}

/** Substitutes `${var}` and `${var.<item>}` from captures; unknown names stay as written. */
export function substitute(text: string, values: Map<string, string | Map<string, string>>): string {
  return truncate(text.replace(VAR, (whole, name: string, item?: string) => {
    if (name === "item") return whole;
    const v = values.get(name);
    if (v === undefined) return whole;
    if (typeof v === "string") return item === undefined ? v : whole;
    if (item === undefined) return [...v.entries()].map(([k, x]) => `${k}: ${x}`).join("\n");
    return v.get(item) ?? whole;
  }));
}

function varsIn(text: string): { name: string; item?: string }[] {
  return [...text.matchAll(VAR)].filter((m) => m[1] !== "item").map((m) => ({ name: m[1], item: m[2] }));
}

function regexProblem(pattern: string): string | null {
  try {
    new RegExp(pattern, "m");
    return null;
  } catch (e) {
    return `invalid regex: ${(e as Error).message.replace(/^Invalid regular expression: /, "")}`;
  }
}

const STEP_KEYS = Object.keys(Step.shape);
const KNOWN_KEYS: Record<string, string[]> = {
  top: Object.keys(FlowSpec.shape),
  defaults: ["timeout_secs", "on_failure"],
  step: STEP_KEYS,
  pane: Object.keys(PaneSpec.shape),
  send: ["target", "text", "submit"],
  ready: ["pattern", "timeout_secs"],
  capture: ["var", "lines"],
  message: ["to", "content", "from", "type", "timeout_secs", "var"],
};

/** Schema problems, in our words. */
function schemaIssues(raw: unknown): Issue[] {
  const parsed = FlowSpec.safeParse(raw);
  if (parsed.success) return [];
  const out: Issue[] = [];
  for (const issue of parsed.error.issues) {
    const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    const value = valueAt(raw, path);
    const last = path[path.length - 1];
    switch (issue.code) {
      case "unrecognized_keys": {
        const table = path.length === 0 ? "top" : typeof last === "number" ? "step" : String(last);
        for (const k of issue.keys) {
          out.push({
            path: [...path, k],
            message: `unknown key "${k}"${suggest(k, KNOWN_KEYS[table] ?? [])}`,
          });
        }
        break;
      }
      case "invalid_type":
        if (value === undefined && path.length === 1 && path[0] === "step") {
          out.push({ path, message: "is required: add at least one [[step]] table" });
        } else if (value === undefined) {
          out.push({ path, message: "is required" });
        } else if (path[path.length - 2] === "env") {
          out.push({ path, message: `must be a string, number or boolean, not ${kindOf(value)}` });
        } else {
          const want = EXPECTED[issue.expected] ?? issue.expected;
          out.push({ path, message: `must be ${want}, not ${kindOf(value)}` });
        }
        break;
      case "invalid_union":
        out.push({
          path,
          message: path[path.length - 2] === "foreach"
            ? `must be a non-empty string or a number, not ${kindOf(value)}${value === "" ? " (empty)" : ""}`
            : `must be a string, number or boolean, not ${kindOf(value)}`,
        });
        break;
      case "invalid_value":
        out.push({
          path,
          message: `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, not ${
            JSON.stringify(value)
          }`,
        });
        break;
      case "too_small":
        if (issue.origin === "array") {
          out.push({
            path,
            message: path.length === 1 ? "needs at least one [[step]] table" : "needs at least one item",
          });
        } else if (issue.origin === "string") out.push({ path, message: "must not be empty" });
        else {
          out.push({
            path,
            message: `must be ${issue.inclusive ? "at least" : "more than"} ${issue.minimum}, not ${value}`,
          });
        }
        break;
      case "too_big":
        out.push({ path, message: `must be at most ${issue.maximum}, not ${value}` });
        break;
      case "invalid_format":
        out.push({ path, message: `${issue.message}, not ${JSON.stringify(value)}` });
        break;
      default:
        out.push({ path, message: issue.message.replace(/^Invalid input: /, "") });
    }
  }
  return out;
}

/**
 * Every dependency cycle in `edges` (node → needs), one per strongly connected
 * group, each as a path that starts and ends at the same node (`a → c → b → a`).
 * A node that needs itself is not reported here.
 */
export function findCycles(edges: Map<string, string[]>): string[][] {
  // Tarjan's strongly connected components, then one cycle through each group.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const groups: string[][] = [];
  let next = 0;
  const connect = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group);
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) connect(v);
  const order = [...edges.keys()];
  return groups
    .map((group) => {
      const members = new Set(group);
      const start = order.find((n) => members.has(n))!;
      // Walk from the group's first node (in file order) back to it, inside the group.
      const path = [start];
      const seen = new Set([start]);
      const walk = (n: string): boolean => {
        for (const m of edges.get(n) ?? []) {
          if (m === start) return path.push(m), true;
          if (!members.has(m) || seen.has(m)) continue;
          seen.add(m);
          path.push(m);
          if (walk(m)) return true;
          path.pop();
        }
        return false;
      };
      walk(start);
      return path;
    })
    .sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
}

/**
 * A step as far as it passed the schema: unknown keys dropped, a field with a
 * problem dropped and named in `broken`; null when its `id` or `foreach` is bad.
 */
function repairStep(
  raw: unknown,
  index: number,
  issues: Issue[],
): { step: Step | null; broken: Set<string> } {
  const broken = new Set<string>();
  const direct = Step.safeParse(raw);
  if (direct.success) return { step: direct.data, broken };
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { step: null, broken };
  const copy = structuredClone(raw) as Record<string, unknown>;
  for (const issue of issues) {
    if (issue.path[0] !== "step" || issue.path[1] !== index) continue;
    const rel = issue.path.slice(2);
    if (!rel.length) continue;
    if (issue.message.startsWith("unknown key")) {
      const parent = valueAt(copy, rel.slice(0, -1)) as Record<string | number, unknown> | undefined;
      if (parent && typeof parent === "object") delete parent[rel[rel.length - 1]];
    } else {
      broken.add(String(rel[0]));
      delete copy[rel[0]];
    }
  }
  if (broken.has("id") || broken.has("foreach")) return { step: null, broken };
  const again = Step.safeParse(copy);
  return { step: again.success ? again.data : null, broken };
}

/** Options for {@link checkFlow}. */
export interface FlowCheckOptions {
  /** Directory relative `cwd`s resolve against (the flow file's). */
  baseDir: string;
  /** Known agent launchers. */
  agents?: string[];
  env?: { get(key: string): string | undefined };
}

/** A step's pane as `up` would get it, and where its fields are in the flow. */
export interface PaneToCheck {
  workspace: ResolvedWorkspace;
  /** The issue path of the step's `pane` table. */
  at: (string | number)[];
  item: string | null;
}

const TOKEN = /\$\{([^}]*)\}/g;
const PANE_TEXT_FIELDS = ["cwd", "name", "worktree", "command", "prompt", "setup"] as const;

/** Checks a parsed flow; returns every problem, or the plan. */
export function checkFlow(
  raw: unknown,
  opts: FlowCheckOptions,
): { issues: Issue[]; plan: FlowPlan | null; panes: PaneToCheck[] } {
  const issues = schemaIssues(raw);
  const panesToCheck: PaneToCheck[] = [];
  // Go on with the steps that passed the schema, so every problem shows at once.
  const top = (raw && typeof raw === "object" && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
  const rawSteps = Array.isArray(top.step) ? top.step : [];
  // A step with a bad field is still checked without it; `broken` keeps checks that
  // depend on such a field from reporting what is only a consequence.
  const repaired = rawSteps.map((s, i) => repairStep(s, i, issues));
  const steps = repaired.map((r) => r.step);
  const brokenOf = (i: number) => repaired[i]?.broken ?? new Set<string>();
  // Capture names also of steps or fields that failed the schema (no "never captured" for them).
  const rawCaptureNames = new Set(
    rawSteps.map((r) => (r as { capture?: { var?: unknown } } | null)?.capture?.var)
      .filter((v): v is string => typeof v === "string"),
  );
  const rawDefaults = (top.defaults && typeof top.defaults === "object" ? top.defaults : {}) as Record<
    string,
    unknown
  >;
  // A default that is itself invalid is reported once, above; do not report every ready again.
  const defaultTimeout = typeof rawDefaults.timeout_secs === "number" ? rawDefaults.timeout_secs : undefined;
  const onFailure = OnFailure.safeParse(rawDefaults.on_failure);
  const ids = new Map<string, number>();
  const captures: FlowPlan["captures"] = {};

  // Ids first, so that checks below know every step (also those that failed the schema).
  rawSteps.forEach((r, i) => {
    const id = (r as { id?: unknown } | null)?.id;
    const s = steps[i];
    if (!s) {
      if (typeof id === "string" && id && !ids.has(id)) ids.set(id, i);
      return;
    }
    if (/[[\]]/.test(s.id)) {
      issues.push({ path: ["step", i, "id"], message: `"${s.id}" must not contain [ or ]` });
    }
    if (ids.has(s.id)) {
      issues.push({
        path: ["step", i, "id"],
        message: `"${s.id}" is already the id of step[${ids.get(s.id)}]`,
      });
    } else ids.set(s.id, i);
  });

  steps.forEach((s, i) => {
    if (!s) return;
    const at = (...k: (string | number)[]) => ["step", i, ...k];
    if (s.pane && s.send) {
      issues.push({
        path: at("send"),
        message: `"pane" and "send" are exclusive; split them into two steps`,
      });
    }
    const broken = brokenOf(i);
    if (s.message && (s.pane || s.send)) {
      issues.push({
        path: at("message"),
        message: `"message" is a step of its own: not with "pane" or "send"`,
      });
    }
    if (s.message && s.ready) {
      issues.push({
        path: at("ready"),
        message: `a "message" step waits for the message's result, not a "ready"`,
      });
    }
    if (
      !s.pane && !s.send && !s.message && !broken.has("pane") && !broken.has("send") && !broken.has("message")
    ) {
      issues.push({
        path: at("id"),
        message: `step "${s.id}" does nothing: give it a "pane", a "send" or a "message"`,
      });
    }
    if (s.capture && !s.ready && !broken.has("ready")) {
      issues.push({
        path: at("capture"),
        message: `"capture" needs a "ready" pattern to know when to capture`,
      });
    }
    if (s.ready && s.ready.timeout_secs === undefined && defaultTimeout === undefined) {
      issues.push({ path: at("ready"), message: `"ready" needs timeout_secs, here or in [defaults]` });
    }
    if (s.submit && !s.pane && !broken.has("pane")) {
      issues.push({
        path: at("submit"),
        message: `"submit" submits a spawned pane's prompt; this step has no "pane" (use send.submit)`,
      });
    }
    if (s.submit && s.pane && s.pane.prompt === undefined) {
      issues.push({ path: at("submit"), message: `"submit = true" needs pane.prompt to submit` });
    }
    if (s.foreach) {
      const seen = new Set<string>();
      s.foreach.forEach((it, j) => {
        const item = String(it);
        if (/[[\]]/.test(item)) {
          issues.push({ path: at("foreach", j), message: `item "${item}" must not contain [ or ]` });
        }
        if (seen.has(item)) {
          issues.push({ path: at("foreach", j), message: `duplicate foreach item "${item}"` });
        }
        seen.add(item);
      });
    }
    if (s.capture) {
      if (s.capture.var === "item") {
        issues.push({
          path: at("capture", "var"),
          message: `"item" is taken by \${item} (a foreach step's item); pick another name`,
        });
      } else if (captures[s.capture.var]) {
        issues.push({
          path: at("capture", "var"),
          message: `capture "${s.capture.var}" is also defined by step "${captures[s.capture.var].step}"`,
        });
      } else captures[s.capture.var] = { step: s.id, foreach: !!s.foreach };
    }
    const mvar = s.message?.var;
    if (mvar !== undefined) {
      if (mvar === "item") {
        issues.push({
          path: at("message", "var"),
          message: `"item" is taken by \${item} (a foreach step's item); pick another name`,
        });
      } else if (captures[mvar]) {
        issues.push({
          path: at("message", "var"),
          message: `capture "${mvar}" is also defined by step "${captures[mvar].step}"`,
        });
      } else captures[mvar] = { step: s.id, foreach: !!s.foreach };
    }
  });

  // Dependencies: every need exists; no cycles.
  const edges = new Map<string, string[]>();
  rawSteps.forEach((r, i) => {
    const s = steps[i];
    if (!s) {
      const raw = r as { id?: unknown; needs?: unknown } | null;
      if (typeof raw?.id === "string" && ids.get(raw.id) === i && Array.isArray(raw.needs)) {
        edges.set(raw.id, raw.needs.filter((n): n is string => typeof n === "string" && ids.has(n)));
      }
      return;
    }
    if (ids.get(s.id) !== i) return; // a duplicate id: reported above
    if (brokenOf(i).has("needs")) {
      const rawNeeds = (r as { needs?: unknown }).needs;
      const known = Array.isArray(rawNeeds)
        ? rawNeeds.filter((n) => typeof n === "string" && ids.has(n))
        : [];
      edges.set(s.id, known.filter((n) => n !== s.id));
      return;
    }
    const seen = new Set<string>();
    (s.needs ?? []).forEach((n, j) => {
      if (!ids.has(n)) issues.push({ path: ["step", i, "needs", j], message: `needs unknown step "${n}"` });
      else if (n === s.id) {
        issues.push({ path: ["step", i, "needs", j], message: `step "${s.id}" needs itself` });
      } else if (seen.has(n)) {
        issues.push({ path: ["step", i, "needs", j], message: `"${n}" is listed twice` });
      }
      seen.add(n);
    });
    edges.set(s.id, [...seen].filter((n) => ids.has(n) && n !== s.id));
  });
  const cycles = findCycles(edges);
  for (const cycle of cycles) {
    issues.push({
      path: ["step", ids.get(cycle[0])!, "needs"],
      message: `dependency cycle: ${cycle.join(" → ")} (each needs the next)`,
    });
  }
  const closure = (id: string): Set<string> => {
    const out = new Set<string>();
    const walk = (x: string) => {
      for (const n of edges.get(x) ?? []) if (!out.has(n)) (out.add(n), walk(n));
    };
    walk(id);
    return out;
  };

  // Per instance: substitution, regexes, panes, sends, variables.
  const instances: StepInstance[] = [];
  const paneNames = new Map<string, string>();
  let panes = 0;
  steps.forEach((s, i) => {
    if (!s || ids.get(s.id) !== i) return;
    const at = (...k: (string | number)[]) => ["step", i, ...k];
    const items = s.foreach ? s.foreach.map(String) : [null];
    const before = closure(s.id);
    /** Problems with `${...}` in a text that takes only `${item}` (and captures when `vars`). */
    const tokens = (text: string | undefined, path: (string | number)[], vars: boolean) => {
      for (const m of (text ?? "").matchAll(TOKEN)) {
        const name = m[1].split(".")[0];
        if (name === "item" && m[1] === "item") {
          if (!s.foreach) {
            issues.push({ path, message: `\${item} is only substituted in a foreach step` });
          }
        } else if (!vars && captures[name]) {
          issues.push({
            path,
            message: `${
              m[0]
            } is not substituted here; captured variables go into send.text and a submitted pane.prompt`,
          });
        }
      }
    };
    tokens(s.ready?.pattern, at("ready", "pattern"), false);
    tokens(s.send?.target, at("send", "target"), false);
    tokens(s.send?.text, at("send", "text"), true);
    tokens(s.message?.to, at("message", "to"), false);
    tokens(s.message?.content, at("message", "content"), true);
    if (s.pane) {
      for (const k of PANE_TEXT_FIELDS) tokens(s.pane[k], at("pane", k), k === "prompt");
      for (const [k, v] of Object.entries(s.pane.env ?? {})) {
        if (typeof v === "string") tokens(v, at("pane", "env", k), false);
      }
    }
    if (s.pane?.name !== undefined && s.foreach && s.foreach.length > 1 && !s.pane.name.includes("${item}")) {
      issues.push({
        path: at("pane", "name"),
        message: `every item would get the pane name "${s.pane.name}"; put \${item} in it`,
      });
    }
    for (const item of items) {
      // `${item}` outside a foreach step was reported above; keep it out of the pane check.
      const sub = (t: string) => item === null ? t.replace(ITEM, "item") : withItem(t, item);
      const ready = s.ready
        ? { pattern: sub(s.ready.pattern), timeout_secs: s.ready.timeout_secs ?? defaultTimeout ?? 0 }
        : null;
      if (ready) {
        const problem = regexProblem(ready.pattern);
        if (problem) {
          issues.push({
            path: at("ready", "pattern"),
            message: item === null ? problem : `${problem} (for item "${item}")`,
          });
        }
      }
      let pane: StepInstance["pane"] = null;
      if (s.pane) {
        panes++;
        const p = structuredClone(s.pane);
        for (const k of PANE_TEXT_FIELDS) {
          if (typeof p[k] === "string") p[k] = sub(p[k] as string);
        }
        if (p.env) {
          for (const [k, v] of Object.entries(p.env)) if (typeof v === "string") p.env[k] = sub(v);
        }
        // Captures are substituted at run time (and reported above where they do not go).
        // Fields holding a capture were reported above; check the pane without them.
        const hasVar = (t: string) => varsIn(t).some((v) => captures[v.name] || rawCaptureNames.has(v.name));
        const forCheck = structuredClone(p);
        for (const k of PANE_TEXT_FIELDS) {
          if (k !== "prompt" && typeof forCheck[k] === "string" && hasVar(forCheck[k] as string)) {
            delete forCheck[k];
          }
        }
        for (const [k, v] of Object.entries(forCheck.env ?? {})) {
          if (typeof v === "string" && hasVar(v)) delete forCheck.env![k];
        }
        // In a prompt every ${name} is a capture (checked below).
        if (forCheck.prompt !== undefined) forCheck.prompt = forCheck.prompt.replace(VAR, "");
        const checked = checkWorkspace({ panes: [forCheck] }, {
          baseDir: opts.baseDir,
          agents: opts.agents,
          env: opts.env,
        });
        for (const issue of checked.issues) {
          const [, , ...rest] = issue.path;
          issues.push({
            path: at("pane", ...rest),
            message: item === null ? issue.message : `${issue.message} (for item "${item}")`,
          });
        }
        if (checked.workspace) {
          p.cwd = checked.workspace.panes[0].cwd;
          panesToCheck.push({ workspace: checked.workspace, at: at("pane"), item });
        }
        if (p.name !== undefined) {
          // (The same name for every item of one step is reported above.)
          const other = paneNames.get(p.name);
          if (other === undefined) paneNames.set(p.name, s.id);
          else if (other !== s.id) {
            issues.push({
              path: at("pane", "name"),
              message: `"${p.name}" is already the pane name of step "${other}"`,
            });
          }
        }
        pane = p;
      }
      let send: StepInstance["send"] = null;
      if (s.send) {
        const target = sub(s.send.target);
        const stepTarget = /^([^[\]]+)(?:\[(.+)\])?$/.exec(target);
        const targetIndex = stepTarget ? ids.get(stepTarget[1]) : undefined;
        const targetStep = targetIndex === undefined ? null : steps[targetIndex];
        const forItem = item === null ? "" : ` (for item "${item}")`;
        if (varsIn(s.send.target).length) {
          // Reported above: captures are not substituted in a target.
        } else if (targetIndex === undefined) {
          issues.push({
            path: at("send", "target"),
            message:
              `"${target}" is not a step of this flow${forItem}; a send targets the pane of a step it needs`,
          });
        } else if (targetStep && !(brokenOf(targetIndex).has("pane") && !targetStep.pane)) {
          // (A target step that failed the schema is reported there.)
          if (!targetStep.pane) {
            issues.push({
              path: at("send", "target"),
              message: `target step "${targetStep.id}" has no pane to send to`,
            });
          } else if (!before.has(targetStep.id)) {
            issues.push({
              path: at("send", "target"),
              message: `send to "${targetStep.id}" needs it: add "${targetStep.id}" to needs`,
            });
          } else if (targetStep.foreach && !stepTarget![2]) {
            issues.push({
              path: at("send", "target"),
              message:
                `"${targetStep.id}" is a foreach step: target one instance as "${targetStep.id}[<item>]"`,
            });
          } else if (stepTarget![2] && !(targetStep.foreach ?? []).map(String).includes(stepTarget![2])) {
            issues.push({
              path: at("send", "target"),
              message: `"${targetStep.id}" has no foreach item "${stepTarget![2]}"`,
            });
          }
        }
        send = { target, text: sub(s.send.text), submit: s.send.submit ?? false };
      }
      // Variables: defined, and defined by a step that runs before this one.
      const texts: [string, (string | number)[]][] = [];
      if (send) texts.push([send.text, at("send", "text")]);
      if (pane?.prompt && s.submit) texts.push([pane.prompt, at("pane", "prompt")]);
      for (const [text, path] of texts) {
        for (const v of varsIn(text)) {
          const c = captures[v.name];
          const token = `\${${v.name}${v.item !== undefined ? `.${v.item}` : ""}}`;
          if (!c && rawCaptureNames.has(v.name)) continue; // its step failed the schema
          if (!c) {
            issues.push({
              path,
              message:
                `${token} is never captured; define capture = { var = "${v.name}", ... } on a step this one needs`,
            });
          } else if (!before.has(c.step)) {
            issues.push({
              path,
              message: `${token} is captured by step "${c.step}", which this step does not need`,
            });
          } else if (v.item !== undefined && !c.foreach) {
            issues.push({
              path,
              message: `${token}: "${v.name}" is not captured by a foreach step; write \${${v.name}}`,
            });
          } else if (v.item !== undefined) {
            const fe = steps[ids.get(c.step)!]!.foreach!.map(String);
            if (!fe.includes(v.item)) {
              issues.push({ path, message: `${token}: step "${c.step}" has no item "${v.item}"` });
            }
          }
        }
      }
      if (pane?.prompt && !s.submit && varsIn(pane.prompt).length) {
        issues.push({
          path: at("pane", "prompt"),
          message: `captured variables are substituted only in a submitted prompt (submit = true)`,
        });
      }
      const needs = [...new Set(s.needs ?? [])].flatMap((n) => {
        const dep = steps[ids.get(n) ?? -1];
        if (!dep || n === s.id) return [];
        return dep.foreach ? dep.foreach.map((x) => `${n}[${x}]`) : [n];
      });
      instances.push({
        key: item === null ? s.id : `${s.id}[${item}]`,
        id: s.id,
        index: i,
        item,
        needs,
        pane,
        submit: s.submit ?? false,
        send,
        ready,
        capture: s.capture ?? null,
        message: s.message
          ? {
            to: sub(s.message.to),
            content: sub(s.message.content),
            from: s.message.from ?? "flow",
            type: s.message.type ?? "task",
            timeout_secs: s.message.timeout_secs ?? defaultTimeout ?? 3600,
            var: s.message.var ?? null,
          }
          : null,
      });
    }
  });
  if (panes > PANE_BUDGET) {
    issues.push({ path: ["step"], message: `the flow spawns ${panes} panes; the budget is ${PANE_BUDGET}` });
  }
  if (issues.length) {
    // A foreach step repeats its problems per item; report each once.
    const seen = new Set<string>();
    const unique = issues.filter((x) => {
      const k = JSON.stringify([x.path, x.message]);
      return seen.has(k) ? false : (seen.add(k), true);
    });
    return { issues: unique, plan: null, panes: panesToCheck };
  }

  // Topological order (stable: file order among ready steps).
  const order: StepInstance[] = [];
  const done = new Set<string>();
  while (order.length < instances.length) {
    for (const inst of instances) {
      if (!done.has(inst.key) && inst.needs.every((n) => done.has(n))) {
        order.push(inst);
        done.add(inst.key);
      }
    }
  }
  return {
    issues: [],
    panes: panesToCheck,
    plan: {
      name: (top.name as string | undefined) ?? "flow",
      layout: (top.layout as FlowPlan["layout"] | undefined) ?? "even_h",
      onFailure: onFailure.success && onFailure.data ? onFailure.data : "fail_fast",
      steps: order,
      submits: steps.some((s) => s?.submit || s?.send?.submit),
      captures,
    },
  };
}

/** Parses and checks a flow file; throws {@link FlowSpecError} with every problem. */
export async function parseFlowToml(
  text: string,
  opts: Omit<FlowCheckOptions, "baseDir"> & {
    path: string;
    display?: string;
    /**
     * The checks `up` makes against the machine (agents on PATH, worktree
     * branches), run on every step's pane once the flow itself is valid.
     */
    checkPane?: (ws: ResolvedWorkspace) => Promise<Issue[]>;
  },
): Promise<{ plan: FlowPlan; locate: Locator }> {
  const file = opts.display ?? opts.path;
  const parsed = await parseTomlFile(text, opts.path, file);
  if (!parsed.ok) throw new FlowSpecError([parsed.issue]);
  const { raw, locate, baseDir } = parsed;
  const { issues, plan, panes } = checkFlow(raw, { ...opts, baseDir });
  if (!plan) throw new FlowSpecError(locateIssues(issues, file, locate));
  if (opts.checkPane) {
    const seen = new Set<string>();
    for (const pane of panes) {
      for (const issue of await opts.checkPane(pane.workspace)) {
        const [, , ...rest] = issue.path;
        const message = pane.item === null ? issue.message : `${issue.message} (for item "${pane.item}")`;
        const key = JSON.stringify([pane.at, rest, issue.message]);
        if (!seen.has(key)) issues.push({ path: [...pane.at, ...rest], message });
        seen.add(key);
      }
    }
    if (issues.length) throw new FlowSpecError(locateIssues(issues, file, locate));
  }
  return { plan, locate };
}
