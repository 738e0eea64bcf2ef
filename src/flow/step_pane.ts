/**
 * What a flow step does with a pane on one of the flow's hosts: spawn it
 * through `workspace.up`, wait until it takes its prompt, and wait for its
 * `ready` pattern (driven by the host's change feed, with a 500 ms poll as
 * the safety net). The runner (./runner.ts) decides when.
 *
 * @module
 */
import type { PaneInfo } from "../client/selectors.ts";
import type { FlowPlan, StepInstance } from "./check.ts";
import type { HostLink } from "./connections.ts";
import { readyForPrompt } from "../agents/readiness.ts";

/** Lines a `ready` pattern scans. */
const SCAN_LINES = 500;
const POLL_MS = 500;
/** An agent pane counts as ready for its prompt once idle; a plain program once quiet this long. */
const QUIET_MS = 800;
const AGENT_READY_TIMEOUT_MS = 120_000;

/** A step failed on its own terms (its message is the report's `error`). */
export class StepFailure extends Error {
  constructor(message: string, readonly timeout = false) {
    super(message);
  }
}

/** The signals a wait stops on: the step's (Ctrl-C or fail_fast) and the run's (Ctrl-C only). */
export interface Stops {
  step: AbortSignal;
  run: AbortSignal;
}

/**
 * Spawns a step's pane (without the prompt it is to submit) as the only pane
 * of a `workspace.up` of the flow's workspace; returns its id. An unnamed
 * pane is named after the step.
 */
export async function spawnStepPane(link: HostLink, plan: FlowPlan, s: StepInstance): Promise<number> {
  const pane = structuredClone(s.pane!);
  if (s.submit) delete pane.prompt;
  const existing = await link.spawnCall("surface.list", {});
  if (pane.name === undefined) pane.name = freeName(s.key, existing.surfaces);
  // A flow step needs its own, fresh pane: `up` would hand back (or refuse) a live one of the
  // same name. An exited one an earlier run of this flow left, `up` replaces.
  const taken = existing.surfaces.find((p) => p.name === pane.name && p.exited !== true);
  if (taken) {
    throw new StepFailure(
      `a pane named "${pane.name}" already runs on ${
        s.host === null ? "the host" : `host "${s.host}"`
      } (pane ${taken.surface_id}); close it or rename the step's pane`,
    );
  }
  const res = await link.spawnCall("workspace.up", {
    name: plan.name,
    layout: plan.layout,
    panes: [pane],
  });
  return res.panes[0].surface_id;
}

/** `base` as a pane name (`review[a]` → `review-a`), numbered past the names `panes` hold. */
export function freeName(base: string, panes: PaneInfo[]): string {
  const taken = new Set(panes.map((p) => p.name));
  const clean = base.replace(/\[(.+)\]$/, "-$1");
  if (!taken.has(clean)) return clean;
  for (let i = 2;; i++) if (!taken.has(`${clean}-${i}`)) return `${clean}-${i}`;
}

/** Waits until an agent pane is idle, or a plain program has gone quiet. */
export async function waitForInput(link: HostLink, id: number, stop: AbortSignal): Promise<void> {
  const { feed } = link;
  const deadline = Date.now() + AGENT_READY_TIMEOUT_MS;
  while (Date.now() < deadline && !stop.aborted) {
    const st = await link.call("surface.status", {
      surface_id: id,
    });
    if (feed.exitCode(id) !== undefined) {
      throw new StepFailure(`pane ${id} exited before its prompt could be submitted`);
    }
    if (readyForPrompt(st, QUIET_MS)) return;
    await feed.next(id, 200, stop);
  }
  if (stop.aborted) throw new StepFailure("interrupted");
  throw new StepFailure(`pane ${id} never became ready for its prompt`);
}

/** Where a pane stood when a send went to it: the barrier after the send looks only past it. */
export interface Mark {
  generation: number;
  lines: number;
}

/** The pane's output generation and line count now, for {@link barrier}'s `after`. */
export async function markOf(link: HostLink, id: number): Promise<Mark> {
  const snap = await link.call("surface.read", {
    surface_id: id,
    lines: 1,
    fenced: false,
  });
  return { generation: snap.output_generation, lines: snap.total_lines };
}

/**
 * Waits until a line matches the step's pattern: among the newest lines of the
 * pane, or (`after`, for a send) among the rows printed or changed since then.
 * Returns the lines scanned and the index of the last that matched.
 */
export async function barrier(
  link: HostLink,
  s: StepInstance,
  { id, after, stops }: { id: number; after: Mark | null; stops: Stops },
): Promise<{ lines: string[]; index: number }> {
  const ready = s.ready!;
  const re = new RegExp(ready.pattern, "m");
  const deadline = Date.now() + ready.timeout_secs * 1000;
  const tail = after ? changedRows(link, id, after) : null;
  while (true) {
    if (stops.step.aborted) throw new StepFailure(stops.run.aborted ? "interrupted" : "cancelled");
    const lines = tail ? await tail() : await newestLines(link, id);
    const index = lines.findLastIndex((l) => re.test(l));
    if (index >= 0) return { lines: [...lines], index };
    const code = link.feed.exitCode(id);
    if (code !== undefined) {
      throw new StepFailure(`pane ${id} exited (exit code ${code}) before /${ready.pattern}/ showed`);
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new StepFailure(`ready /${ready.pattern}/ did not show within ${ready.timeout_secs}s`, true);
    }
    await link.feed.next(id, Math.min(POLL_MS, left), stops.step);
  }
}

/** The newest lines of a pane (wrapped rows joined). */
async function newestLines(link: HostLink, id: number): Promise<string[]> {
  const read = await link.call("surface.read", {
    surface_id: id,
    lines: SCAN_LINES,
    fenced: false,
    join_wrapped: true,
  });
  return read.text.split("\n");
}

/**
 * Reads the rows of a pane printed or changed since `after`, each call
 * adding to what earlier calls saw: a row redrawn (a prompt being typed)
 * keeps one entry with its newest text, by line number.
 */
function changedRows(link: HostLink, id: number, after: Mark): () => Promise<string[]> {
  let since = after.generation;
  const seen = new Map<number, string>();
  return async () => {
    const read = await link.call("surface.read", { surface_id: id, lines: SCAN_LINES, fenced: false, since });
    since = read.output_generation;
    // A reset (the host no longer knew our generation) sends the whole tail:
    // keep only rows past those the pane held at the send.
    // Asked unfenced: the changed rows carry their text.
    for (const c of (read.fenced ? undefined : read.changed) ?? []) {
      if (!read.reset || c.line > after.lines) seen.set(c.line, c.text);
    }
    const order = [...seen.keys()].sort((a, b) => a - b);
    for (const k of order.splice(0, Math.max(0, order.length - SCAN_LINES))) seen.delete(k);
    return order.map((k) => seen.get(k)!);
  };
}
