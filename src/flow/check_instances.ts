/**
 * A flow's step instances, planned and checked (src/flow/check.ts runs this
 * after the per-step checks of src/flow/check_steps.ts): a `foreach` step
 * becomes one instance per item, `${item}` substituted; each instance's
 * `ready` regex, pane (checked as `up` would check it), send target and
 * captured variables are checked.
 *
 * @module
 */
import type { ResolvedWorkspace } from "../spec/workspace.ts";
import type { Step, StepInstance } from "../spec/flow.ts";
import { branchProblem, checkWorkspace } from "../up/check.ts";
import { ITEM, VAR, varsIn, withItem } from "./substitute.ts";
import { regexProblem } from "./schema_issues.ts";
import type { FlowScan } from "./check_steps.ts";

/** A step's pane as `up` would get it, and where its fields are in the flow. */
export interface PaneToCheck {
  workspace: ResolvedWorkspace;
  /** The issue path of the step's `pane` table. */
  at: (string | number)[];
  item: string | null;
}

/** The instances of a flow's steps, in file order, and what planning them found out. */
export interface Planned {
  instances: StepInstance[];
  /** Local panes, for the checks `up` makes against the machine. */
  panesToCheck: PaneToCheck[];
  /** Panes the flow spawns in all. */
  paneCount: number;
  /** Each pane name and the id of the step that uses it. */
  paneNames: Map<string, string>;
}

/** A step's pane table as in the flow (`${item}` substituted in an instance's). */
type PaneSpec = NonNullable<Step["pane"]>;

const TOKEN = /\$\{([^}]*)\}/g;
/** A remote step's `cwd` is taken on that machine: absolute, `~`, `~/…` or `$VAR…`. */
const REMOTE_CWD = /^(\/|~$|~\/|\$[A-Za-z_])/;
/** A remote pane's worktree fields: its own host checks them in `up` (the repository is there). */
const REMOTE_ONLY_FIELDS = ["worktree", "copy_env", "worktree_teardown"] as const;
const PANE_TEXT_FIELDS = ["cwd", "name", "worktree", "command", "prompt", "setup"] as const;

/** One step being planned: where its fields are, and the steps it needs, directly or not. */
interface StepAt {
  s: Step;
  i: number;
  at: (...k: (string | number)[]) => (string | number)[];
  before: Set<string>;
}

/** Per instance: substitution, regexes, panes, sends, variables (problems go to `scan.issues`). */
export function planInstances(scan: FlowScan, edges: Map<string, string[]>): Planned {
  const out: Planned = { instances: [], panesToCheck: [], paneCount: 0, paneNames: new Map() };
  scan.steps.forEach((s, i) => {
    if (!s || scan.ids.get(s.id) !== i) return;
    const step: StepAt = { s, i, at: (...k) => ["step", i, ...k], before: closure(edges, s.id) };
    tokenIssues(scan, step);
    if (s.pane?.name !== undefined && s.foreach && s.foreach.length > 1 && !s.pane.name.includes("${item}")) {
      scan.issues.push({
        path: step.at("pane", "name"),
        message: `every item would get the pane name "${s.pane.name}"; put \${item} in it`,
      });
    }
    for (const item of s.foreach ? s.foreach.map(String) : [null]) {
      out.instances.push(planInstance(scan, step, item, out));
    }
  });
  return out;
}

/** The ids of the steps `id` needs, directly or through others. */
function closure(edges: Map<string, string[]>, id: string): Set<string> {
  const out = new Set<string>();
  const walk = (x: string) => {
    for (const n of edges.get(x) ?? []) if (!out.has(n)) (out.add(n), walk(n));
  };
  walk(id);
  return out;
}

/** Problems with `${...}` in the step's texts: `${item}` outside a foreach, captures where none go. */
function tokenIssues(scan: FlowScan, { s, at }: StepAt): void {
  /** `${...}` in a text that takes only `${item}` (and captures when `vars`). */
  const tokens = (text: string | undefined, path: (string | number)[], vars: boolean) => {
    for (const m of (text ?? "").matchAll(TOKEN)) {
      const name = m[1].split(".")[0];
      if (name === "item" && m[1] === "item") {
        if (!s.foreach) {
          scan.issues.push({ path, message: `\${item} is only substituted in a foreach step` });
        }
      } else if (!vars && scan.captures[name]) {
        scan.issues.push({
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
}

/** One instance of a step (for one foreach item, or the step's only one when `item` is null). */
function planInstance(scan: FlowScan, step: StepAt, item: string | null, out: Planned): StepInstance {
  const { s, i, at } = step;
  const forItem = (message: string) => item === null ? message : `${message} (for item "${item}")`;
  // `${item}` outside a foreach step was reported already; keep it out of the pane check.
  const sub = (t: string) => item === null ? t.replace(ITEM, "item") : withItem(t, item);
  const ready = s.ready
    ? { pattern: sub(s.ready.pattern), timeout_secs: s.ready.timeout_secs ?? scan.defaultTimeout ?? 0 }
    : null;
  const problem = ready && regexProblem(ready.pattern);
  if (problem) scan.issues.push({ path: at("ready", "pattern"), message: forItem(problem) });
  const pane = s.pane ? planPane(scan, step, { item, sub, out }) : null;
  /** Where the step acts: its pane's host, or for a send its target's. */
  let host = scan.hostOf(s);
  let send: StepInstance["send"] = null;
  if (s.send) {
    const target = sub(s.send.target);
    const targetStep = checkTarget(scan, step, { target, item });
    if (!s.pane) host = scan.hostOf(targetStep);
    send = { target, text: sub(s.send.text), submit: s.send.submit ?? false };
  }
  varIssues(scan, step, { send, pane });
  if (pane?.prompt && !s.submit && varsIn(pane.prompt).length) {
    scan.issues.push({
      path: at("pane", "prompt"),
      message: `captured variables are substituted only in a submitted prompt (submit = true)`,
    });
  }
  const needs = [...new Set(s.needs ?? [])].flatMap((n) => {
    const dep = scan.steps[scan.ids.get(n) ?? -1];
    if (!dep || n === s.id) return [];
    return dep.foreach ? dep.foreach.map((x) => `${n}[${x}]`) : [n];
  });
  return {
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
          timeout_secs: s.message.timeout_secs ?? scan.defaultTimeout ?? 3600,
          var: s.message.var ?? null,
        },
      }
      : {}),
  };
}

/**
 * An instance's pane, `${item}` substituted, checked as `up` would check it
 * (without the fields that hold a capture, and for a remote step without
 * what depends on that machine); a local pane's `cwd` becomes absolute.
 */
function planPane(
  scan: FlowScan,
  step: StepAt,
  { item, sub, out }: { item: string | null; sub: (t: string) => string; out: Planned },
): PaneSpec {
  const { s, at } = step;
  out.paneCount++;
  const p = structuredClone(s.pane!);
  for (const k of PANE_TEXT_FIELDS) {
    if (typeof p[k] === "string") p[k] = sub(p[k] as string);
  }
  if (p.env) {
    for (const [k, v] of Object.entries(p.env)) if (typeof v === "string") p.env[k] = sub(v);
  }
  const forCheck = withoutCaptures(scan, p);
  const remote = scan.hostOf(s);
  if (remote !== null) remoteIssues(scan, step, { p, forCheck, remote });
  const checked = checkWorkspace({ panes: [forCheck] }, {
    baseDir: scan.opts.baseDir,
    agents: remote === null ? scan.opts.agents : undefined,
    env: scan.opts.env,
    // A selector may name any step's pane: matched against them all in checkFlow.
    paneNames: null,
  });
  for (const issue of checked.issues) {
    const [, , ...rest] = issue.path;
    scan.issues.push({
      path: at("pane", ...rest),
      message: item === null ? issue.message : `${issue.message} (for item "${item}")`,
    });
  }
  if (checked.workspace && remote === null) {
    p.cwd = checked.workspace.panes[0].cwd;
    out.panesToCheck.push({ workspace: checked.workspace, at: at("pane"), item });
  }
  if (p.name !== undefined) {
    // (The same name for every item of one step is reported already.)
    const other = out.paneNames.get(p.name);
    if (other === undefined) out.paneNames.set(p.name, s.id);
    else if (other !== s.id) {
      scan.issues.push({
        path: at("pane", "name"),
        message: `"${p.name}" is already the pane name of step "${other}"`,
      });
    }
  }
  return p;
}

/**
 * A copy of a pane for `up`'s checks. Captures are substituted at run time
 * (and reported already where they do not go): fields holding one are
 * left out, and in a prompt every `${name}` (a capture, checked later) is.
 */
function withoutCaptures(scan: FlowScan, p: PaneSpec): PaneSpec {
  const hasVar = (t: string) =>
    varsIn(t).some((v) => scan.captures[v.name] || scan.rawCaptureNames.has(v.name));
  const forCheck = structuredClone(p);
  for (const k of PANE_TEXT_FIELDS) {
    if (k !== "prompt" && typeof forCheck[k] === "string" && hasVar(forCheck[k] as string)) {
      delete forCheck[k];
    }
  }
  for (const [k, v] of Object.entries(forCheck.env ?? {})) {
    if (typeof v === "string" && hasVar(v)) delete forCheck.env![k];
  }
  if (forCheck.prompt !== undefined) forCheck.prompt = forCheck.prompt.replace(VAR, "");
  return forCheck;
}

/**
 * A pane on another machine: the directory, the worktree and the agent's
 * launcher are that machine's, and its host checks them in `up`. Here: what
 * does not depend on the machine. Sets `p.cwd` to `~` when it is not given,
 * and leaves out of `forCheck` what only that machine can check.
 */
function remoteIssues(
  scan: FlowScan,
  { at }: StepAt,
  { p, forCheck, remote }: { p: PaneSpec; forCheck: PaneSpec; remote: string },
): void {
  if (p.cwd === undefined) p.cwd = "~";
  else if (!REMOTE_CWD.test(p.cwd) && !p.cwd.includes("${")) {
    scan.issues.push({
      path: at("pane", "cwd"),
      message: `"${p.cwd}" is relative: a step on host "${remote}" needs a directory of that machine ` +
        `("/…", "~/…" or "$VAR/…")`,
    });
  }
  if (forCheck.worktree !== undefined) {
    // The branch name does not depend on the machine; the repository does.
    const problem = branchProblem(forCheck.worktree);
    if (problem) {
      scan.issues.push({
        path: at("pane", "worktree"),
        message: `"${forCheck.worktree}" is not a valid branch name: ${problem}`,
      });
    }
    for (const k of REMOTE_ONLY_FIELDS) delete forCheck[k];
  }
  forCheck.cwd = "/";
}

/**
 * A send's target: a step of this flow, with a pane, that this step needs;
 * one instance of a foreach step. Returns the target step (null when there is none).
 */
function checkTarget(
  scan: FlowScan,
  { s, at, before }: StepAt,
  { target, item }: { target: string; item: string | null },
): Step | null {
  const stepTarget = /^([^[\]]+)(?:\[(.+)\])?$/.exec(target);
  const targetIndex = stepTarget ? scan.ids.get(stepTarget[1]) : undefined;
  const targetStep = targetIndex === undefined ? null : scan.steps[targetIndex];
  const add = (message: string) => scan.issues.push({ path: at("send", "target"), message });
  if (varsIn(s.send!.target).length) {
    // Reported already: captures are not substituted in a target.
  } else if (targetIndex === undefined) {
    add(
      `"${target}" is not a step of this flow${
        item === null ? "" : ` (for item "${item}")`
      }; a send targets the pane of a step it needs`,
    );
  } else if (targetStep && !(scan.brokenOf(targetIndex).has("pane") && !targetStep.pane)) {
    // (A target step that failed the schema is reported there.)
    const instance = stepTarget![2];
    if (!targetStep.pane) add(`target step "${targetStep.id}" has no pane to send to`);
    else if (!before.has(targetStep.id)) {
      add(`send to "${targetStep.id}" needs it: add "${targetStep.id}" to needs`);
    } else if (targetStep.foreach && !instance) {
      add(`"${targetStep.id}" is a foreach step: target one instance as "${targetStep.id}[<item>]"`);
    } else if (instance && !(targetStep.foreach ?? []).map(String).includes(instance)) {
      add(`"${targetStep.id}" has no foreach item "${instance}"`);
    }
  }
  return targetStep;
}

/** Variables: defined, and defined by a step that runs before this one. */
function varIssues(
  scan: FlowScan,
  { s, at, before }: StepAt,
  { send, pane }: { send: StepInstance["send"]; pane: PaneSpec | null },
): void {
  const texts: [string, (string | number)[]][] = [];
  if (send) texts.push([send.text, at("send", "text")]);
  if (pane?.prompt && s.submit) texts.push([pane.prompt, at("pane", "prompt")]);
  for (const [text, path] of texts) {
    for (const v of varsIn(text)) {
      const c = scan.captures[v.name];
      const token = `\${${v.name}${v.item !== undefined ? `.${v.item}` : ""}}`;
      const add = (message: string) => scan.issues.push({ path, message });
      if (!c && scan.rawCaptureNames.has(v.name)) continue; // its step failed the schema
      if (!c) {
        add(
          `${token} is never captured; define capture = { var = "${v.name}", ... } on a step this one needs`,
        );
      } else if (!before.has(c.step)) {
        add(`${token} is captured by step "${c.step}", which this step does not need`);
      } else if (v.item !== undefined && !c.foreach) {
        add(`${token}: "${v.name}" is not captured by a foreach step; write \${${v.name}}`);
      } else if (v.item !== undefined) {
        const fe = scan.steps[scan.ids.get(c.step)!]!.foreach!.map(String);
        if (!fe.includes(v.item)) add(`${token}: step "${c.step}" has no item "${v.item}"`);
      }
    }
  }
}
