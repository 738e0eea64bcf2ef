/**
 * The checks of a flow that look at one step at a time (its fields, its id,
 * the variables it captures) and at the dependencies between steps: what
 * src/flow/check.ts runs before it plans the step instances
 * (src/flow/check_instances.ts).
 *
 * @module
 */
import type { Issue } from "../spec/workspace.ts";
import type { FlowPlan, Step } from "../spec/flow.ts";
import { findCycles } from "./cycles.ts";
import { repairStep, schemaIssues } from "./schema_issues.ts";

/** Options for `checkFlow` (src/flow/check.ts). */
export interface FlowCheckOptions {
  /** Directory relative `cwd`s resolve against (the flow file's). */
  baseDir: string;
  /** Known agent launchers. */
  agents?: string[];
  env?: { get(key: string): string | undefined };
  /** Names of the config's `hosts`: a step's `host` must be one (or `local`). */
  hosts?: string[];
}

/** What the checks of one flow share as they go. */
export interface FlowScan {
  /** Every problem so far. */
  readonly issues: Issue[];
  readonly opts: FlowCheckOptions;
  /** The flow's top-level table (empty when the document is not one). */
  readonly top: Record<string, unknown>;
  readonly rawSteps: unknown[];
  /** Each step as far as it passed the schema; null when its `id` or `foreach` is bad. */
  readonly steps: (Step | null)[];
  /**
   * The fields of step `i` that failed the schema: a step with a bad field is
   * still checked without it, and checks that depend on such a field do not
   * report what is only a consequence.
   */
  brokenOf(i: number): Set<string>;
  /** Capture names also of steps or fields that failed the schema (no "never captured" for them). */
  readonly rawCaptureNames: Set<string>;
  /** `[defaults] timeout_secs`, unless it is itself invalid (reported once, by the schema). */
  readonly defaultTimeout: number | undefined;
  /** The index of the first step with each id (also of steps that failed the schema). */
  readonly ids: Map<string, number>;
  /** Each captured variable and the step that defines it. */
  readonly captures: FlowPlan["captures"];
  /** A step's remote host, or null for this machine. */
  hostOf(s: { host?: string } | null | undefined): string | null;
}

/** The schema's problems with a parsed flow, and what the checks after it start from. */
export function startScan(raw: unknown, opts: FlowCheckOptions): FlowScan {
  const issues = schemaIssues(raw);
  // Go on with the steps that passed the schema, so every problem shows at once.
  const top = (raw && typeof raw === "object" && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
  const rawSteps: unknown[] = Array.isArray(top.step) ? top.step : [];
  const repaired = rawSteps.map((s, i) => repairStep(s, i, issues));
  const rawDefaults = (top.defaults && typeof top.defaults === "object" ? top.defaults : {}) as Record<
    string,
    unknown
  >;
  const knownHosts = opts.hosts ?? [];
  return {
    issues,
    opts,
    top,
    rawSteps,
    steps: repaired.map((r) => r.step),
    brokenOf: (i) => repaired[i]?.broken ?? new Set<string>(),
    rawCaptureNames: new Set(
      rawSteps.map((r) => (r as { capture?: { var?: unknown } } | null)?.capture?.var)
        .filter((v): v is string => typeof v === "string"),
    ),
    defaultTimeout: typeof rawDefaults.timeout_secs === "number" ? rawDefaults.timeout_secs : undefined,
    ids: new Map(),
    captures: {},
    hostOf: (s) =>
      s?.host === undefined || s.host === "local" || !knownHosts.includes(s.host) ? null : s.host,
  };
}

/** Step ids: no brackets, none twice. First, so that later checks know every step. */
export function checkIds(scan: FlowScan): void {
  const { issues, ids } = scan;
  scan.rawSteps.forEach((r, i) => {
    const id = (r as { id?: unknown } | null)?.id;
    const s = scan.steps[i];
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
}

/** One step's fields: its host, the fields that exclude or need each other, its items and variables. */
export function checkStep(scan: FlowScan, s: Step, i: number): void {
  const at = (...k: (string | number)[]) => ["step", i, ...k];
  scan.issues.push(...hostIssues(s, scan.opts.hosts ?? [], at));
  scan.issues.push(...shapeIssues(s, { broken: scan.brokenOf(i), defaultTimeout: scan.defaultTimeout }, at));
  if (s.foreach) {
    const seen = new Set<string>();
    s.foreach.forEach((it, j) => {
      const item = String(it);
      if (/[[\]]/.test(item)) {
        scan.issues.push({ path: at("foreach", j), message: `item "${item}" must not contain [ or ]` });
      }
      if (seen.has(item)) {
        scan.issues.push({ path: at("foreach", j), message: `duplicate foreach item "${item}"` });
      }
      seen.add(item);
    });
  }
  // A step whose id is taken (reported already) captures nothing: `${var}` would name the other.
  if (scan.ids.get(s.id) !== i) return;
  if (s.capture) claimVar(scan, s, s.capture.var, at("capture", "var"));
  if (s.message?.var !== undefined) claimVar(scan, s, s.message.var, at("message", "var"));
}

type At = (...k: (string | number)[]) => (string | number)[];

/** A step's `host` must be known and belong with a pane. */
function hostIssues(s: Step, knownHosts: string[], at: At): Issue[] {
  const out: Issue[] = [];
  if (s.host !== undefined && s.host !== "local" && !knownHosts.includes(s.host)) {
    out.push({
      path: at("host"),
      message: `no host "${s.host}" in the config's "hosts" (${
        knownHosts.length ? `known: ${knownHosts.join(", ")}` : 'add hosts.<name> = {ssh: "user@box"}'
      }); "local" is this machine`,
    });
  }
  if (s.host !== undefined && s.send && !s.pane) {
    out.push({
      path: at("host"),
      message:
        `a send goes to its target's pane, on that step's host; "host" belongs on the step with the pane`,
    });
  }
  return out;
}

/** The fields of a step that exclude or need each other. */
function shapeIssues(
  s: Step,
  { broken, defaultTimeout }: { broken: Set<string>; defaultTimeout: number | undefined },
  at: At,
): Issue[] {
  const out: Issue[] = [];
  const add = (path: (string | number)[], message: string) => out.push({ path, message });
  if (s.pane && s.send) add(at("send"), `"pane" and "send" are exclusive; split them into two steps`);
  if (s.message && (s.pane || s.send)) {
    add(at("message"), `"message" is a step of its own: not with "pane" or "send"`);
  }
  if (s.message && s.ready) {
    add(at("ready"), `a "message" step waits for the message's result, not a "ready"`);
  }
  if (
    !s.pane && !s.send && !s.message && !broken.has("pane") && !broken.has("send") && !broken.has("message")
  ) {
    add(at("id"), `step "${s.id}" does nothing: give it a "pane", a "send" or a "message"`);
  }
  if (s.capture && !s.ready && !broken.has("ready")) {
    add(at("capture"), `"capture" needs a "ready" pattern to know when to capture`);
  }
  if (s.ready && s.ready.timeout_secs === undefined && defaultTimeout === undefined) {
    add(at("ready"), `"ready" needs timeout_secs, here or in [defaults]`);
  }
  if (s.submit && !s.pane && !broken.has("pane")) {
    add(at("submit"), `"submit" submits a spawned pane's prompt; this step has no "pane" (use send.submit)`);
  }
  if (s.submit && s.pane && s.pane.prompt === undefined) {
    add(at("submit"), `"submit = true" needs pane.prompt to submit`);
  }
  return out;
}

/** Defines the variable `name` as captured by step `s`, unless the name is taken. */
function claimVar(scan: FlowScan, s: Step, name: string, path: (string | number)[]): void {
  const taken = scan.captures[name];
  if (name === "item") {
    scan.issues.push({
      path,
      message: `"item" is taken by \${item} (a foreach step's item); pick another name`,
    });
  } else if (taken) {
    scan.issues.push({ path, message: `capture "${name}" is also defined by step "${taken.step}"` });
  } else scan.captures[name] = { step: s.id, foreach: !!s.foreach };
}

/**
 * Dependencies: every need names a step, once, not itself; no cycles.
 * Returns the edges (step id to the ids it needs) that the checks after
 * this one follow.
 */
export function checkNeeds(scan: FlowScan): Map<string, string[]> {
  const { issues, ids } = scan;
  const edges = new Map<string, string[]>();
  scan.rawSteps.forEach((r, i) => {
    const s = scan.steps[i];
    if (!s) {
      const raw = r as { id?: unknown; needs?: unknown } | null;
      if (typeof raw?.id === "string" && ids.get(raw.id) === i && Array.isArray(raw.needs)) {
        edges.set(raw.id, raw.needs.filter((n): n is string => typeof n === "string" && ids.has(n)));
      }
      return;
    }
    if (ids.get(s.id) !== i) return; // a duplicate id: reported already
    if (scan.brokenOf(i).has("needs")) {
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
  for (const cycle of findCycles(edges)) {
    issues.push({
      path: ["step", ids.get(cycle[0])!, "needs"],
      message: `dependency cycle: ${cycle.join(" → ")} (each needs the next)`,
    });
  }
  return edges;
}
