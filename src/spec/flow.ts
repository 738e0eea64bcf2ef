/**
 * The flow spec of `paneflow flow run` (SPEC §7, seed 000): a TOML DAG of
 * steps. Validation reports every problem at once with file, line and key,
 * before anything runs; the result is a plan of step instances (a `foreach`
 * step becomes one instance per item, `${item}` substituted).
 *
 * @module
 */
import { z } from "zod";
import { type Issue, type LocatedIssue, locateIssues, PaneSpec, type WorkspaceSpec } from "./workspace.ts";
import { checkWorkspace, formatIssue } from "./workspace.ts";
import { UsageError } from "../errors.ts";
import { locateKeys, type Locator } from "./toml_locate.ts";

/** Largest number of panes one flow may spawn. */
export const PANE_BUDGET = 32;
/** Substituted text longer than this is cut with {@link TRUNCATED}. */
export const MAX_TEXT_BYTES = 64 * 1024;
/** The marker that ends truncated text. */
export const TRUNCATED = "…[truncated]";

const OnFailure = z.enum(["fail_fast", "continue"]);

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
    var: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a name of letters, digits and _"),
    lines: z.number().int().min(1).max(500),
  }).optional(),
  submit: z.boolean().optional(),
});

/** The flow file's schema. */
export const FlowSpec = z.strictObject({
  name: z.string().min(1).optional(),
  layout: z.enum(["even_h", "even_v", "main_vertical", "tiled"]).optional(),
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

function schemaIssues(raw: unknown): Issue[] {
  const parsed = FlowSpec.safeParse(raw);
  if (parsed.success) return [];
  const out: Issue[] = [];
  for (const issue of parsed.error.issues) {
    const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    if (issue.code === "unrecognized_keys") {
      for (const k of issue.keys) out.push({ path: [...path, k], message: `unknown key "${k}"` });
    } else if (issue.code === "invalid_type" && path.length === 1 && path[0] === "step") {
      out.push({ path, message: "is required: add at least one [[step]] table" });
    } else {
      out.push({ path, message: issue.message.replace(/^Invalid input: /, "") });
    }
  }
  return out;
}

/** Finds a cycle in `edges` (node → needs) and returns its path, or null. */
export function findCycle(edges: Map<string, string[]>): string[] | null {
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (n: string): string[] | null => {
    state.set(n, 1);
    stack.push(n);
    for (const m of edges.get(n) ?? []) {
      if (state.get(m) === 1) return [...stack.slice(stack.indexOf(m)), m];
      if (!state.has(m)) {
        const c = visit(m);
        if (c) return c;
      }
    }
    stack.pop();
    state.set(n, 2);
    return null;
  };
  for (const n of edges.keys()) {
    if (!state.has(n)) {
      const c = visit(n);
      if (c) return c;
    }
  }
  return null;
}

/** Options for {@link checkFlow}. */
export interface FlowCheckOptions {
  /** Directory relative `cwd`s resolve against (the flow file's). */
  baseDir: string;
  /** Known agent launchers. */
  agents?: string[];
  env?: { get(key: string): string | undefined };
}

/** Checks a parsed flow; returns every problem, or the plan. */
export function checkFlow(raw: unknown, opts: FlowCheckOptions): { issues: Issue[]; plan: FlowPlan | null } {
  const issues = schemaIssues(raw);
  // Go on with the steps that passed the schema, so every problem shows at once.
  const top = (raw && typeof raw === "object" && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
  const rawSteps = Array.isArray(top.step) ? top.step : [];
  const spec = {
    ...top,
    step: rawSteps.map((s) => Step.safeParse(s)).map((r) => (r.success ? r.data : null)),
  } as unknown as FlowSpec;
  const parsedDefaults = FlowSpec.shape.defaults.safeParse(top.defaults);
  const defaults = (parsedDefaults.success ? parsedDefaults.data : undefined) ?? {};
  const steps = spec.step as (FlowSpec["step"][number] | null)[];
  const ids = new Map<string, number>();
  const captures: FlowPlan["captures"] = {};

  steps.forEach((s, i) => {
    if (!s) {
      // Invalid step (reported by the schema): still known by its id, so others can need it.
      const rid = (rawSteps[i] as { id?: unknown } | null)?.id;
      if (typeof rid === "string" && !ids.has(rid)) ids.set(rid, i);
      return;
    }
    const at = (...k: (string | number)[]) => ["step", i, ...k];
    if (/[[\]]/.test(s.id)) issues.push({ path: at("id"), message: `"${s.id}" must not contain [ or ]` });
    if (ids.has(s.id)) {
      issues.push({
        path: at("id"),
        message: `duplicate step id "${s.id}" (also step ${ids.get(s.id)! + 1})`,
      });
    } else ids.set(s.id, i);
    if (s.pane && s.send) {
      issues.push({
        path: at("send"),
        message: `"pane" and "send" are exclusive; split them into two steps`,
      });
    }
    if (!s.pane && !s.send) {
      issues.push({ path: at("id"), message: `step "${s.id}" does nothing: give it a "pane" or a "send"` });
    }
    if (s.capture && !s.ready) {
      issues.push({
        path: at("capture"),
        message: `"capture" needs a "ready" pattern to know when to capture`,
      });
    }
    if (s.ready && s.ready.timeout_secs === undefined && defaults.timeout_secs === undefined) {
      issues.push({ path: at("ready"), message: `"ready" needs timeout_secs, here or in [defaults]` });
    }
    if (s.submit && !s.pane) {
      issues.push({
        path: at("submit"),
        message: `"submit" submits a spawned pane's prompt; this step has no "pane"`,
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
      if (captures[s.capture.var]) {
        issues.push({
          path: at("capture", "var"),
          message: `capture "${s.capture.var}" is also defined by step "${captures[s.capture.var].step}"`,
        });
      } else captures[s.capture.var] = { step: s.id, foreach: !!s.foreach };
    }
  });

  // Dependencies: every need exists; no cycles.
  const edges = new Map<string, string[]>();
  steps.forEach((s, i) => {
    if (!s) {
      const r = rawSteps[i] as { id?: unknown; needs?: unknown } | null;
      if (typeof r?.id === "string" && Array.isArray(r.needs)) {
        edges.set(r.id, r.needs.filter((n): n is string => typeof n === "string" && ids.has(n)));
      }
      return;
    }
    (s.needs ?? []).forEach((n, j) => {
      if (!ids.has(n)) issues.push({ path: ["step", i, "needs", j], message: `needs unknown step "${n}"` });
      if (n === s.id) issues.push({ path: ["step", i, "needs", j], message: `step "${s.id}" needs itself` });
    });
    edges.set(s.id, (s.needs ?? []).filter((n) => ids.has(n) && n !== s.id));
  });
  const cycle = findCycle(edges);
  if (cycle) {
    issues.push({
      path: ["step", ids.get(cycle[0])!, "needs"],
      message: `dependency cycle: ${cycle.join(" → ")}`,
    });
  }
  const closure = (id: string): Set<string> => {
    const out = new Set<string>();
    const walk = (x: string) => {
      for (const n of edges.get(x) ?? []) if (!out.has(n)) (out.add(n), walk(n));
    };
    if (!cycle) walk(id);
    return out;
  };

  // Per instance: substitution, regexes, panes, sends, variables.
  const instances: StepInstance[] = [];
  let panes = 0;
  steps.forEach((s, i) => {
    if (!s) return;
    const at = (...k: (string | number)[]) => ["step", i, ...k];
    const items = s.foreach ? s.foreach.map(String) : [null];
    const before = closure(s.id);
    for (const item of items) {
      const sub = (t: string) => withItem(t, item);
      if (item === null) {
        for (
          const [k, v] of [["ready", s.ready?.pattern], ["send", s.send?.target], [
            "send",
            s.send?.text,
          ]] as const
        ) {
          if (v && ITEM.test(v)) {
            issues.push({ path: at(k), message: `\${item} is only substituted in a foreach step` });
          }
          ITEM.lastIndex = 0;
        }
      }
      const ready = s.ready
        ? { pattern: sub(s.ready.pattern), timeout_secs: s.ready.timeout_secs ?? defaults.timeout_secs ?? 0 }
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
        for (const k of ["cwd", "name", "worktree", "command", "prompt", "setup"] as const) {
          if (typeof p[k] === "string") p[k] = sub(p[k] as string);
        }
        if (p.env) {
          for (const [k, v] of Object.entries(p.env)) if (typeof v === "string") p.env[k] = sub(v);
        }
        // Captures go into a submitted prompt at run time; check the pane without them.
        const forCheck = { ...p, prompt: p.prompt?.replace(VAR, "") };
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
        if (checked.workspace) p.cwd = checked.workspace.panes[0].cwd;
        pane = p;
      }
      let send: StepInstance["send"] = null;
      if (s.send) {
        const target = sub(s.send.target);
        const stepTarget = /^([^[\]]+)(?:\[(.+)\])?$/.exec(target);
        const targetStep = stepTarget && ids.has(stepTarget[1]) ? steps[ids.get(stepTarget[1])!] : null;
        // (A target step that failed the schema is reported there.)
        if (targetStep) {
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
          if (!c) {
            issues.push({
              path,
              message: `\${${v.name}${
                v.item ? `.${v.item}` : ""
              }} is never captured; define capture = { var = "${v.name}", ... } on an earlier step`,
            });
          } else if (!before.has(c.step)) {
            issues.push({
              path,
              message: `\${${v.name}} is captured by step "${c.step}", which this step does not need`,
            });
          } else if (v.item !== undefined && !c.foreach) {
            issues.push({
              path,
              message:
                `\${${v.name}.${v.item}}: "${v.name}" is not captured by a foreach step; write \${${v.name}}`,
            });
          } else if (v.item !== undefined) {
            const fe = steps[ids.get(c.step)!]!.foreach!.map(String);
            if (!fe.includes(v.item)) {
              issues.push({
                path,
                message: `\${${v.name}.${v.item}}: step "${c.step}" has no item "${v.item}"`,
              });
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
      const needs = (s.needs ?? []).flatMap((n) => {
        const dep = steps[ids.get(n) ?? -1];
        if (!dep) return [];
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
      });
    }
  });
  if (panes > PANE_BUDGET) {
    issues.push({ path: ["step"], message: `the flow spawns ${panes} panes; the budget is ${PANE_BUDGET}` });
  }
  if (issues.length) return { issues, plan: null };

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
    plan: {
      name: (top.name as string | undefined) ?? "flow",
      layout: (top.layout as FlowPlan["layout"] | undefined) ?? "even_h",
      onFailure: defaults.on_failure ?? "fail_fast",
      steps: order,
      submits: steps.some((s) => s?.submit || s?.send?.submit),
      captures,
    },
  };
}

/** Parses and checks a flow file; throws {@link FlowSpecError} with every problem. */
export async function parseFlowToml(
  text: string,
  opts: Omit<FlowCheckOptions, "baseDir"> & { path: string; display?: string },
): Promise<{ plan: FlowPlan; locate: Locator }> {
  const file = opts.display ?? opts.path;
  const { parse } = await import("smol-toml");
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (e) {
    const err = e as Error & { line?: number; column?: number };
    throw new FlowSpecError([{
      file,
      line: err.line ?? 1,
      column: err.column ?? 1,
      path: [],
      message: `invalid TOML: ${err.message.split("\n")[0].replace(/^Invalid TOML document: /, "")}`,
    }]);
  }
  const abs = opts.path.startsWith("/") ? opts.path : `${Deno.cwd()}/${opts.path}`;
  let baseDir = abs.slice(0, abs.lastIndexOf("/")) || "/";
  try {
    baseDir = Deno.realPathSync(baseDir);
  } catch { /* keep */ }
  const locate = locateKeys(text);
  const { issues, plan } = checkFlow(raw, { ...opts, baseDir });
  if (!plan) throw new FlowSpecError(locateIssues(issues, file, locate));
  return { plan, locate };
}
