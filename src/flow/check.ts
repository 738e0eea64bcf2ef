/**
 * Checking and planning a flow (docs/flows.md; the schema is src/spec/flow.ts).
 * Validation reports every problem at once with file, line and key,
 * before anything runs; the result is a plan of step instances (a `foreach`
 * step becomes one instance per item, `${item}` substituted).
 *
 * @module
 */
import type { Issue, LocatedIssue, ResolvedWorkspace } from "../spec/workspace.ts";
import { branchProblem, checkWorkspace, formatIssue, locateIssues } from "../up/check.ts";
import { UsageError } from "../errors.ts";
import { type Locator, parseTomlFile } from "../toml_locate.ts";
import type { FlowPlan, StepInstance } from "../spec/flow.ts";
import { OnFailure, PANE_BUDGET } from "../spec/flow.ts";
import { findCycles } from "./cycles.ts";
import { ITEM, VAR, varsIn, withItem } from "./substitute.ts";
import { regexProblem, repairStep, schemaIssues } from "./schema_issues.ts";

export type { FlowPlan, FlowSpec, StepInstance } from "../spec/flow.ts";
export { findCycles } from "./cycles.ts";
export { substitute, truncate, withItem } from "./substitute.ts";

/** The flow is invalid: carries every problem. */
export class FlowSpecError extends UsageError {
  override name = "FlowSpecError";
  constructor(readonly issues: LocatedIssue[]) {
    super(issues.map(formatIssue).join("\n"));
  }
}

/** Options for {@link checkFlow}. */
export interface FlowCheckOptions {
  /** Directory relative `cwd`s resolve against (the flow file's). */
  baseDir: string;
  /** Known agent launchers. */
  agents?: string[];
  env?: { get(key: string): string | undefined };
  /** Names of the config's `hosts`: a step's `host` must be one (or `local`). */
  hosts?: string[];
}

/** A step's pane as `up` would get it, and where its fields are in the flow. */
export interface PaneToCheck {
  workspace: ResolvedWorkspace;
  /** The issue path of the step's `pane` table. */
  at: (string | number)[];
  item: string | null;
}

const TOKEN = /\$\{([^}]*)\}/g;
/** A remote step's `cwd` is taken on that machine: absolute, `~`, `~/…` or `$VAR…`. */
const REMOTE_CWD = /^(\/|~$|~\/|\$[A-Za-z_])/;
/** A remote pane's worktree fields: its own host checks them in `up` (the repository is there). */
const REMOTE_ONLY_FIELDS = ["worktree", "copy_env", "worktree_teardown"] as const;
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

  const knownHosts = opts.hosts ?? [];
  /** The step's remote host, or null for this machine. */
  const hostOf = (s: { host?: string } | null | undefined): string | null =>
    s?.host === undefined || s.host === "local" || !knownHosts.includes(s.host) ? null : s.host;
  steps.forEach((s, i) => {
    if (!s) return;
    const at = (...k: (string | number)[]) => ["step", i, ...k];
    if (s.host !== undefined && s.host !== "local" && !knownHosts.includes(s.host)) {
      issues.push({
        path: at("host"),
        message: `no host "${s.host}" in the config's "hosts" (${
          knownHosts.length ? `known: ${knownHosts.join(", ")}` : 'add hosts.<name> = {ssh: "user@box"}'
        }); "local" is this machine`,
      });
    }
    if (s.host !== undefined && s.send && !s.pane) {
      issues.push({
        path: at("host"),
        message:
          `a send goes to its target's pane, on that step's host; "host" belongs on the step with the pane`,
      });
    }
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
    // A step whose id is taken (reported above) captures nothing: `${var}` would name the other.
    const own = ids.get(s.id) === i;
    if (s.capture && own) {
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
    if (mvar !== undefined && own) {
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
        const remote = hostOf(s);
        if (remote !== null) {
          // The directory, the worktree and the agent's launcher are that machine's: its host
          // checks them in `up`. Here: what does not depend on the machine.
          if (p.cwd === undefined) p.cwd = "~";
          else if (!REMOTE_CWD.test(p.cwd) && !p.cwd.includes("${")) {
            issues.push({
              path: at("pane", "cwd"),
              message:
                `"${p.cwd}" is relative: a step on host "${remote}" needs a directory of that machine ` +
                `("/…", "~/…" or "$VAR/…")`,
            });
          }
          if (forCheck.worktree !== undefined) {
            // The branch name does not depend on the machine; the repository does.
            const problem = branchProblem(forCheck.worktree);
            if (problem) {
              issues.push({
                path: at("pane", "worktree"),
                message: `"${forCheck.worktree}" is not a valid branch name: ${problem}`,
              });
            }
            for (const k of REMOTE_ONLY_FIELDS) delete forCheck[k];
          }
          forCheck.cwd = "/";
        }
        const checked = checkWorkspace({ panes: [forCheck] }, {
          baseDir: opts.baseDir,
          agents: remote === null ? opts.agents : undefined,
          env: opts.env,
        });
        for (const issue of checked.issues) {
          const [, , ...rest] = issue.path;
          issues.push({
            path: at("pane", ...rest),
            message: item === null ? issue.message : `${issue.message} (for item "${item}")`,
          });
        }
        if (checked.workspace && remote === null) {
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
      /** Where the step acts: its pane's host, or for a send its target's. */
      let host = hostOf(s);
      if (s.send) {
        const target = sub(s.send.target);
        const stepTarget = /^([^[\]]+)(?:\[(.+)\])?$/.exec(target);
        const targetIndex = stepTarget ? ids.get(stepTarget[1]) : undefined;
        const targetStep = targetIndex === undefined ? null : steps[targetIndex];
        if (!s.pane) host = hostOf(targetStep);
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
        host,
        item,
        needs,
        pane,
        submit: s.submit ?? false,
        send,
        ready,
        capture: s.capture ?? null,
        // Only on a message step: the plans of other steps keep their shape.
        ...(s.message
          ? {
            message: {
              to: sub(s.message.to),
              content: sub(s.message.content),
              from: s.message.from ?? "flow",
              type: s.message.type ?? "task",
              timeout_secs: s.message.timeout_secs ?? defaultTimeout ?? 3600,
              var: s.message.var ?? null,
            },
          }
          : {}),
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
      hosts: [...new Set(steps.map(hostOf).filter((h): h is string => h !== null))],
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
