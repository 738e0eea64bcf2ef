/**
 * Checking and planning a flow (docs/flows.md; the schema is src/spec/flow.ts).
 * Validation reports every problem at once with file, line and key,
 * before anything runs; the result is a plan of step instances (a `foreach`
 * step becomes one instance per item, `${item}` substituted).
 *
 * @module
 */
import { unmatchedSelectors } from "../caps/check.ts";
import type { Issue, LocatedIssue, ResolvedWorkspace } from "../spec/workspace.ts";
import { formatIssue, locateIssues } from "../up/check.ts";
import { UsageError } from "../errors.ts";
import { type Locator, parseTomlFile } from "../toml_locate.ts";
import type { FlowPlan, StepInstance } from "../spec/flow.ts";
import { OnFailure, PANE_BUDGET } from "../spec/flow.ts";
import { checkIds, checkNeeds, checkStep, type FlowCheckOptions, startScan } from "./check_steps.ts";
import { type PaneToCheck, planInstances } from "./check_instances.ts";

export type { FlowPlan, FlowSpec, StepInstance } from "../spec/flow.ts";
export type { FlowCheckOptions } from "./check_steps.ts";
export type { PaneToCheck } from "./check_instances.ts";
export { findCycles } from "./cycles.ts";
export { substitute, truncate, withItem } from "./substitute.ts";

/** The flow is invalid: carries every problem. */
export class FlowSpecError extends UsageError {
  override name = "FlowSpecError";
  constructor(readonly issues: LocatedIssue[]) {
    super(issues.map(formatIssue).join("\n"));
  }
}

/** Checks a parsed flow; returns every problem, or the plan. */
export function checkFlow(
  raw: unknown,
  opts: FlowCheckOptions,
): { issues: Issue[]; plan: FlowPlan | null; panes: PaneToCheck[] } {
  const scan = startScan(raw, opts);
  checkIds(scan);
  scan.steps.forEach((s, i) => s && checkStep(scan, s, i));
  const planned = planInstances(scan, checkNeeds(scan));
  const { issues, steps, top } = scan;
  if (planned.paneCount > PANE_BUDGET) {
    issues.push({
      path: ["step"],
      message: `the flow spawns ${planned.paneCount} panes; the budget is ${PANE_BUDGET}`,
    });
  }
  // A pane's caps selectors name panes of any step (their names as substituted).
  const allNames = [...planned.paneNames.keys()];
  steps.forEach((s, i) => {
    if (s?.pane?.caps) issues.push(...unmatchedSelectors(s.pane.caps, ["step", i, "pane", "caps"], allNames));
  });
  if (issues.length) {
    // A foreach step repeats its problems per item; report each once.
    const seen = new Set<string>();
    const unique = issues.filter((x) => {
      const k = JSON.stringify([x.path, x.message]);
      return seen.has(k) ? false : (seen.add(k), true);
    });
    return { issues: unique, plan: null, panes: planned.panesToCheck };
  }
  const defaults = (top.defaults && typeof top.defaults === "object" ? top.defaults : {}) as {
    on_failure?: unknown;
  };
  const onFailure = OnFailure.safeParse(defaults.on_failure);
  return {
    issues: [],
    panes: planned.panesToCheck,
    plan: {
      name: (top.name as string | undefined) ?? "flow",
      layout: (top.layout as FlowPlan["layout"] | undefined) ?? "even_h",
      onFailure: onFailure.success && onFailure.data ? onFailure.data : "fail_fast",
      steps: topological(planned.instances),
      submits: steps.some((s) => s?.submit || s?.send?.submit),
      hosts: [...new Set(steps.map(scan.hostOf).filter((h): h is string => h !== null))],
      captures: scan.captures,
    },
  };
}

/** Instances in the order they can run (stable: file order among ready steps). */
function topological(instances: StepInstance[]): StepInstance[] {
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
  return order;
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
