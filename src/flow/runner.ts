/**
 * The flow runner: starts each step as soon as its needs are met, spawns
 * panes through `workspace.up` (the same path as `paneflow up`), submits
 * through the agents' submit transaction, and waits on `ready` barriers driven
 * by the event bus (with a 500 ms poll as the safety net). It is a client of
 * the hosts: the same code runs against a user's host, an embedded one, and
 * the hosts of other machines a step names (`host = "gpu"`), each through
 * its own connections (./connections.ts).
 *
 * @module
 */
import type { PaneInfo } from "../client/selectors.ts";
import { RpcError } from "../errors.ts";
import { type FlowPlan, type StepInstance, substitute } from "./check.ts";
import { type FlowHosts, type HostLink, LOCAL } from "./connections.ts";
import { readyForPrompt } from "../agents/readiness.ts";

/** Lines a `ready` pattern scans. */
const SCAN_LINES = 500;
const POLL_MS = 500;
/** An agent pane counts as ready for its prompt once idle; a plain program once quiet this long. */
const QUIET_MS = 800;
const AGENT_READY_TIMEOUT_MS = 120_000;

/** Final status of a step instance. */
export type StepStatus = "READY" | "FAILED" | "SKIPPED";

/** One line of the final report. */
export interface StepReport {
  step: string;
  id: string;
  item: string | null;
  /** Where its pane lives: `local` (this machine) or a host of the config. */
  host: string;
  status: StepStatus;
  /** When it started, in ms after the flow started; null when it never did. */
  started_ms: number | null;
  duration_ms: number | null;
  surface_id: number | null;
  error: string | null;
  /** The ready barrier ran out of time. */
  timeout: boolean;
  /** Stopped by another step's failure (fail_fast) or by Ctrl-C, not by its own. */
  cancelled: boolean;
  /**
   * How its submit went (a submitted prompt, or a send with submit): an agent's
   * submit transaction gives submitted, queued or unknown; a plain program "sent".
   */
  submitted: string | null;
}

/** What a run gives. */
export interface FlowReport {
  flow: string;
  ok: boolean;
  cancelled: boolean;
  duration_ms: number;
  steps: StepReport[];
  captures: Record<string, string | Record<string, string>>;
}

/** Receives live transitions (stderr progress). */
export interface ProgressSink {
  update(step: StepReport, note?: string): void;
}

/** Options for {@link runFlow}. */
export interface RunOptions {
  /** Connections to every host the flow uses, opened; closed when the run ends. */
  hosts: FlowHosts;
  progress: ProgressSink;
  signal: AbortSignal;
}

class StepFailure extends Error {
  constructor(message: string, readonly timeout = false) {
    super(message);
  }
}

/** Resolves when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** Runs a validated flow against the hosts of `opts.hosts`. */
export async function runFlow(plan: FlowPlan, opts: RunOptions): Promise<FlowReport> {
  const started = Date.now();
  // A few connections per host (a host serves 16): a slow call, such as an agent's
  // submit transaction, does not hold up the other steps' barriers.
  const closeAll = () => opts.hosts.close();
  const values = new Map<string, string | Map<string, string>>();
  const reports = new Map<string, StepReport>();
  /** Each step's pane: where it lives and its id there. */
  const panes = new Map<string, { link: HostLink; id: number }>();
  for (const s of plan.steps) {
    reports.set(s.key, {
      step: s.key,
      id: s.id,
      item: s.item,
      host: s.host ?? LOCAL,
      status: "SKIPPED",
      started_ms: null,
      duration_ms: null,
      surface_id: null,
      error: null,
      timeout: false,
      cancelled: false,
      submitted: null,
    });
  }
  // Spawns go one at a time per host (on its spawn connection), so that two steps
  // never race to create the workspace or pick the same free pane name there.
  const spawning = new Map<HostLink, Promise<unknown>>();

  const state = new Map<string, "pending" | "running" | "done" | "failed" | "skipped">();
  for (const s of plan.steps) state.set(s.key, "pending");
  let failed = false;
  let firstFailure: string | null = null;
  const running = new Map<string, Promise<void>>();
  const stepAbort = new AbortController();
  opts.signal.addEventListener("abort", () => {
    stepAbort.abort();
    // Ctrl-C: calls in flight (a spawn, an agent's submit) fail now instead of
    // being waited for; what the host does with them, and the panes, stay.
    closeAll();
  }, { once: true });

  const skip = (s: StepInstance, why: string) => {
    state.set(s.key, "skipped");
    const r = reports.get(s.key)!;
    r.status = "SKIPPED";
    r.error = why;
    opts.progress.update(r);
  };

  const execute = async (s: StepInstance) => {
    const r = reports.get(s.key)!;
    const t0 = Date.now();
    r.started_ms = t0 - started;
    state.set(s.key, "running");
    opts.progress.update(r, "started");
    try {
      await runStep(s, r);
      state.set(s.key, "done");
      r.status = "READY";
    } catch (e) {
      state.set(s.key, "failed");
      r.status = "FAILED";
      r.error = e instanceof Error ? e.message : String(e);
      r.timeout = e instanceof StepFailure && e.timeout;
      if (stepAbort.signal.aborted && !r.timeout) {
        // Stopped from outside: Ctrl-C, or fail_fast after another step failed.
        r.cancelled = true;
        r.error = opts.signal.aborted
          ? "interrupted"
          : `cancelled: ${firstFailure ?? "a step"} failed (fail_fast)`;
      } else firstFailure ??= s.key;
      failed = true;
    } finally {
      r.duration_ms = Date.now() - t0;
      opts.progress.update(r);
    }
  };

  const runStep = async (s: StepInstance, r: StepReport) => {
    let surfaceId: number;
    let link: HostLink;
    let after: { generation: number; lines: number } | null = null;
    if (s.pane) {
      link = opts.hosts.link(s.host);
      surfaceId = await spawnPane(link, s);
      panes.set(s.key, { link, id: surfaceId });
      r.surface_id = surfaceId;
      opts.progress.update(r, `pane ${surfaceId}${s.host === null ? "" : ` on ${s.host}`}`);
      if (s.submit && s.pane.prompt !== undefined) {
        await waitForInput(link, surfaceId);
        const text = substitute(s.pane.prompt, values);
        const res = await link.call("surface.send_text", {
          surface_id: surfaceId,
          text,
          submit: true,
        });
        r.submitted = res.status ?? "sent";
        if (res.status === "stalled") throw new StepFailure(`prompt not taken by the agent: ${res.evidence}`);
        opts.progress.update(r, `prompt ${r.submitted}`);
      }
    } else if (s.message) {
      await runMessage(s, r);
      return;
    } else {
      const send = s.send!;
      // The target step's pane, on whichever host it lives.
      ({ link, id: surfaceId } = resolveTarget(send.target));
      r.surface_id = surfaceId;
      r.host = link.host;
      if (s.ready) {
        // The barrier looks only at what the pane prints after the send.
        const snap = await link.call("surface.read", {
          surface_id: surfaceId,
          lines: 1,
          fenced: false,
        });
        after = { generation: snap.output_generation, lines: snap.total_lines };
      }
      const res = await link.call("surface.send_text", {
        surface_id: surfaceId,
        text: substitute(send.text, values),
        submit: send.submit,
      });
      if (send.submit) r.submitted = res.status ?? "sent";
      if (res.status === "stalled") throw new StepFailure(`text not taken by the agent: ${res.evidence}`);
    }
    if (!s.ready) return;
    const matched = await barrier(link, s, surfaceId, after);
    if (s.capture) {
      // The captured lines end with the line that matched, so the value does
      // not depend on what the pane printed a moment later.
      const value = matched.lines.slice(Math.max(0, matched.index + 1 - s.capture.lines), matched.index + 1)
        .join("\n").replace(/\s+$/, "");
      if (s.item === null) values.set(s.capture.var, value);
      else {
        const m = (values.get(s.capture.var) as Map<string, string> | undefined) ?? new Map<string, string>();
        m.set(s.item, value);
        // Items in the flow's order, not in the order they finished (for ${var} and the report).
        const order = plan.steps.filter((x) => x.id === s.id).map((x) => x.item);
        values.set(s.capture.var, new Map([...m].sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))));
      }
      opts.progress.update(r, `captured \${${s.capture.var}} (${value.split("\n").length} lines)`);
    } else {
      opts.progress.update(r, `matched: ${matched.lines[matched.index].slice(0, 80)}`);
    }
  };

  /** A `message` step: put it on the host's queue and wait for its result (docs/paneio.md). */
  const runMessage = async (s: StepInstance, r: StepReport) => {
    const m = s.message!;
    const info = await opts.hosts.link(s.host).call("queue.info", {});
    if (!info.root) {
      throw new StepFailure(
        "the host has no message queue: start it with serve --queue <dir> or set queue.root",
      );
    }
    const { sendAndWait } = await import("../paneio/flow_step.ts");
    const timeout = new Promise<never>((_, reject) => {
      const t = setTimeout(
        () => reject(new StepFailure(`message to "${m.to}" had no result within ${m.timeout_secs}s`, true)),
        m.timeout_secs * 1000,
      );
      stepAbort.signal.addEventListener("abort", () => clearTimeout(t));
    });
    const done = await Promise.race([
      sendAndWait(info.root, { ...m, content: substitute(m.content, values) }, stepAbort.signal, (id) => {
        opts.progress.update(r, `message ${id} to ${m.to}`);
      }),
      timeout,
      aborted(stepAbort.signal).then(() => {
        throw new StepFailure("interrupted");
      }),
    ]);
    if (done.status === "failed") {
      throw new StepFailure(`message ${done.id} to "${m.to}" failed: ${done.reason}`);
    }
    r.submitted = "completed";
    if (m.var) {
      if (s.item === null) values.set(m.var, done.result);
      else {
        const got = (values.get(m.var) as Map<string, string> | undefined) ?? new Map<string, string>();
        got.set(s.item, done.result);
        const order = plan.steps.filter((x) => x.id === s.id).map((x) => x.item);
        values.set(m.var, new Map([...got].sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))));
      }
      opts.progress.update(r, `\${${m.var}} = result of ${done.id}`);
    } else opts.progress.update(r, `message ${done.id} completed`);
  };

  const spawnPane = (link: HostLink, s: StepInstance): Promise<number> => {
    const p = (spawning.get(link) ?? Promise.resolve()).then(() => spawnNow(link, s));
    spawning.set(link, p.catch(() => {}));
    return p;
  };

  const spawnNow = async (link: HostLink, s: StepInstance): Promise<number> => {
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
  };

  /** `base` as a pane name (`review[a]` → `review-a`), numbered past the names `panes` hold. */
  const freeName = (base: string, panes: PaneInfo[]): string => {
    const taken = new Set(panes.map((p) => p.name));
    const clean = base.replace(/\[(.+)\]$/, "-$1");
    if (!taken.has(clean)) return clean;
    for (let i = 2;; i++) if (!taken.has(`${clean}-${i}`)) return `${clean}-${i}`;
  };

  /** The pane of the step a send targets (validation made it a step this one needs). */
  const resolveTarget = (target: string): { link: HostLink; id: number } => {
    const own = panes.get(target);
    if (own === undefined) throw new StepFailure(`step "${target}" has no pane to send to`);
    return own;
  };

  /** Waits until an agent pane is idle, or a plain program has gone quiet. */
  const waitForInput = async (link: HostLink, id: number) => {
    const { feed } = link;
    const deadline = Date.now() + AGENT_READY_TIMEOUT_MS;
    while (Date.now() < deadline && !stepAbort.signal.aborted) {
      const st = await link.call("surface.status", {
        surface_id: id,
      });
      if (feed.exitCode(id) !== undefined) {
        throw new StepFailure(`pane ${id} exited before its prompt could be submitted`);
      }
      if (readyForPrompt(st, QUIET_MS)) return;
      await feed.next(id, 200, stepAbort.signal);
    }
    if (stepAbort.signal.aborted) throw new StepFailure("interrupted");
    throw new StepFailure(`pane ${id} never became ready for its prompt`);
  };

  /**
   * Waits until a line matches the step's pattern: among the newest lines of the
   * pane, or (`after`, for a send) among the rows printed or changed since then.
   */
  const barrier = async (
    link: HostLink,
    s: StepInstance,
    id: number,
    after: { generation: number; lines: number } | null,
  ): Promise<{ lines: string[]; index: number }> => {
    const { feed } = link;
    const re = new RegExp(s.ready!.pattern, "m");
    const deadline = Date.now() + s.ready!.timeout_secs * 1000;
    let since = after?.generation ?? null;
    // Rows seen since the send, by line number: a row redrawn (a prompt being typed)
    // keeps one entry with its newest text.
    const seen = new Map<number, string>();
    while (true) {
      if (stepAbort.signal.aborted) throw new StepFailure(opts.signal.aborted ? "interrupted" : "cancelled");
      let lines: string[];
      if (since === null) {
        const read = await link.call("surface.read", {
          surface_id: id,
          lines: SCAN_LINES,
          fenced: false,
          join_wrapped: true,
        });
        lines = read.text.split("\n");
      } else {
        const read = await link.call("surface.read", {
          surface_id: id,
          lines: SCAN_LINES,
          fenced: false,
          since,
        });
        since = read.output_generation;
        // A reset (the host no longer knew our generation) sends the whole tail:
        // keep only rows past those the pane held at the send.
        // Asked unfenced: the changed rows carry their text.
        for (const c of (read.fenced ? undefined : read.changed) ?? []) {
          if (!read.reset || c.line > after!.lines) seen.set(c.line, c.text);
        }
        const order = [...seen.keys()].sort((a, b) => a - b);
        for (const k of order.splice(0, Math.max(0, order.length - SCAN_LINES))) seen.delete(k);
        lines = order.map((k) => seen.get(k)!);
      }
      const index = lines.findLastIndex((l) => re.test(l));
      if (index >= 0) return { lines: [...lines], index };
      const code = feed.exitCode(id);
      if (code !== undefined) {
        throw new StepFailure(`pane ${id} exited (exit code ${code}) before /${s.ready!.pattern}/ showed`);
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new StepFailure(
          `ready /${s.ready!.pattern}/ did not show within ${s.ready!.timeout_secs}s`,
          true,
        );
      }
      await feed.next(id, Math.min(POLL_MS, left), stepAbort.signal);
    }
  };

  const interrupted = aborted(opts.signal);
  try {
    while (true) {
      if (opts.signal.aborted) break;
      let progressed = false;
      for (const s of plan.steps) {
        if (state.get(s.key) !== "pending") continue;
        const needStates = s.needs.map((n) => state.get(n));
        if (needStates.some((x) => x === "failed" || x === "skipped")) {
          skip(s, `needs ${s.needs.filter((n) => ["failed", "skipped"].includes(state.get(n)!)).join(", ")}`);
          progressed = true;
          continue;
        }
        if (failed && plan.onFailure === "fail_fast") {
          skip(s, "not started: an earlier step failed (fail_fast)");
          progressed = true;
          continue;
        }
        if (needStates.every((x) => x === "done")) {
          const p = execute(s).finally(() => running.delete(s.key));
          running.set(s.key, p);
          progressed = true;
        }
      }
      if (failed && plan.onFailure === "fail_fast") stepAbort.abort();
      if (running.size === 0 && !progressed) break;
      if (running.size) await Promise.race([...running.values(), interrupted]);
    }
    await Promise.allSettled(running.values());
    for (const s of plan.steps) {
      if (state.get(s.key) === "pending") {
        skip(s, opts.signal.aborted ? "not started: interrupted" : "not started");
      }
    }
  } finally {
    closeAll();
  }
  const captures: FlowReport["captures"] = {};
  for (const [k, v] of values) captures[k] = typeof v === "string" ? v : Object.fromEntries(v);
  const steps = plan.steps.map((s) => reports.get(s.key)!);
  return {
    flow: plan.name,
    ok: steps.every((s) => s.status === "READY"),
    cancelled: opts.signal.aborted,
    duration_ms: Date.now() - started,
    steps,
    captures,
  };
}

/**
 * The exit code of a run: 0; 130 when interrupted; 4 when every step that
 * failed on its own ran out of time on its ready barrier; else 1.
 */
export function exitCodeOf(report: FlowReport): number {
  if (report.cancelled) return 130;
  if (report.ok) return 0;
  const failed = report.steps.filter((s) => s.status === "FAILED" && !s.cancelled);
  if (failed.length && failed.every((s) => s.timeout)) return 4;
  return 1;
}

/** Whether an error from the host is the write gate's refusal. */
export function isGateError(e: unknown): boolean {
  return e instanceof RpcError && e.data?.reason === "gated";
}
