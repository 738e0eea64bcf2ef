/**
 * The flow runner: starts each step as soon as its needs are met, spawns
 * panes through `workspace.up` (the same path as `paneflow up`), submits
 * through the agents' submit transaction, and waits on `ready` barriers driven
 * by the event bus (with a 500 ms poll as the safety net; ./step_pane.ts). It is a client of
 * the hosts: the same code runs against a user's host, an embedded one, and
 * the hosts of other machines a step names (`host = "gpu"`), each through
 * its own connections (./connections.ts).
 *
 * @module
 */
import { RpcError } from "../errors.ts";
import { type FlowPlan, type StepInstance, substitute } from "./check.ts";
import { type FlowHosts, type HostLink, LOCAL } from "./connections.ts";
import {
  barrier,
  type Mark,
  markOf,
  spawnStepPane,
  StepFailure,
  type Stops,
  waitForInput,
} from "./step_pane.ts";

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

/** Resolves when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** Runs a validated flow against the hosts of `opts.hosts`. */
export function runFlow(plan: FlowPlan, opts: RunOptions): Promise<FlowReport> {
  return new FlowRun(plan, opts).run();
}

type StepState = "pending" | "running" | "done" | "failed" | "skipped";

/** One run of a flow: the state of every step instance, and what the steps captured. */
class FlowRun {
  readonly #plan: FlowPlan;
  readonly #opts: RunOptions;
  readonly #started = Date.now();
  /** Captured variables: a value, or for a foreach step a value per item. */
  readonly #values = new Map<string, string | Map<string, string>>();
  readonly #reports = new Map<string, StepReport>();
  readonly #state = new Map<string, StepState>();
  /** Each step's pane: where it lives and its id there. */
  readonly #panes = new Map<string, { link: HostLink; id: number }>();
  /**
   * Spawns go one at a time per host (on its spawn connection), so that two steps
   * never race to create the workspace or pick the same free pane name there.
   */
  readonly #spawning = new Map<HostLink, Promise<unknown>>();
  readonly #running = new Map<string, Promise<void>>();
  /** Stops the steps in flight: Ctrl-C, or fail_fast after a failure. */
  readonly #stepAbort = new AbortController();
  #failed = false;
  #firstFailure: string | null = null;

  constructor(plan: FlowPlan, opts: RunOptions) {
    this.#plan = plan;
    this.#opts = opts;
    for (const s of plan.steps) {
      this.#state.set(s.key, "pending");
      this.#reports.set(s.key, {
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
  }

  get #stops(): Stops {
    return { step: this.#stepAbort.signal, run: this.#opts.signal };
  }

  /** Starts each step as soon as its needs are met; returns the report once none runs. */
  async run(): Promise<FlowReport> {
    const { signal, hosts } = this.#opts;
    signal.addEventListener("abort", () => {
      this.#stepAbort.abort();
      // Ctrl-C: calls in flight (a spawn, an agent's submit) fail now instead of
      // being waited for; what the host does with them, and the panes, stay.
      hosts.close();
    }, { once: true });
    const interrupted = aborted(signal);
    try {
      while (!signal.aborted) {
        const progressed = this.#startReady();
        if (this.#failed && this.#plan.onFailure === "fail_fast") this.#stepAbort.abort();
        if (this.#running.size === 0 && !progressed) break;
        if (this.#running.size) await Promise.race([...this.#running.values(), interrupted]);
      }
      await Promise.allSettled(this.#running.values());
      for (const s of this.#plan.steps) {
        if (this.#state.get(s.key) === "pending") {
          this.#skip(s, signal.aborted ? "not started: interrupted" : "not started");
        }
      }
    } finally {
      hosts.close();
    }
    const captures: FlowReport["captures"] = {};
    for (const [k, v] of this.#values) captures[k] = typeof v === "string" ? v : Object.fromEntries(v);
    const steps = this.#plan.steps.map((s) => this.#reports.get(s.key)!);
    return {
      flow: this.#plan.name,
      ok: steps.every((s) => s.status === "READY"),
      cancelled: signal.aborted,
      duration_ms: Date.now() - this.#started,
      steps,
      captures,
    };
  }

  /** One pass over the pending steps: skips those that cannot run, starts those whose needs are met. */
  #startReady(): boolean {
    let progressed = false;
    for (const s of this.#plan.steps) {
      if (this.#state.get(s.key) !== "pending") continue;
      const needStates = s.needs.map((n) => this.#state.get(n));
      if (needStates.some((x) => x === "failed" || x === "skipped")) {
        const why = s.needs.filter((n) => ["failed", "skipped"].includes(this.#state.get(n)!));
        this.#skip(s, `needs ${why.join(", ")}`);
        progressed = true;
      } else if (this.#failed && this.#plan.onFailure === "fail_fast") {
        this.#skip(s, "not started: an earlier step failed (fail_fast)");
        progressed = true;
      } else if (needStates.every((x) => x === "done")) {
        this.#running.set(s.key, this.#execute(s).finally(() => this.#running.delete(s.key)));
        progressed = true;
      }
    }
    return progressed;
  }

  #skip(s: StepInstance, why: string): void {
    this.#state.set(s.key, "skipped");
    const r = this.#reports.get(s.key)!;
    r.status = "SKIPPED";
    r.error = why;
    this.#opts.progress.update(r);
  }

  /** Runs one step and records how it ended. */
  async #execute(s: StepInstance): Promise<void> {
    const r = this.#reports.get(s.key)!;
    const t0 = Date.now();
    r.started_ms = t0 - this.#started;
    this.#state.set(s.key, "running");
    this.#opts.progress.update(r, "started");
    try {
      await this.#runStep(s, r);
      this.#state.set(s.key, "done");
      r.status = "READY";
    } catch (e) {
      this.#state.set(s.key, "failed");
      r.status = "FAILED";
      r.error = e instanceof Error ? e.message : String(e);
      r.timeout = e instanceof StepFailure && e.timeout;
      if (this.#stepAbort.signal.aborted && !r.timeout) {
        // Stopped from outside: Ctrl-C, or fail_fast after another step failed.
        r.cancelled = true;
        r.error = this.#opts.signal.aborted
          ? "interrupted"
          : `cancelled: ${this.#firstFailure ?? "a step"} failed (fail_fast)`;
      } else this.#firstFailure ??= s.key;
      this.#failed = true;
    } finally {
      r.duration_ms = Date.now() - t0;
      this.#opts.progress.update(r);
    }
  }

  /** A pane step spawns (and submits), a send step sends, a message step messages; then the barrier. */
  async #runStep(s: StepInstance, r: StepReport): Promise<void> {
    if (s.message) return await this.#runMessage(s, r);
    const { link, id, after } = s.pane ? await this.#spawn(s, r) : await this.#send(s, r);
    if (!s.ready) return;
    const matched = await barrier(link, s, { id, after, stops: this.#stops });
    if (s.capture) {
      // The captured lines end with the line that matched, so the value does
      // not depend on what the pane printed a moment later.
      const value = matched.lines.slice(Math.max(0, matched.index + 1 - s.capture.lines), matched.index + 1)
        .join("\n").replace(/\s+$/, "");
      this.#store(s, s.capture.var, value);
      this.#opts.progress.update(r, `captured \${${s.capture.var}} (${value.split("\n").length} lines)`);
    } else {
      this.#opts.progress.update(r, `matched: ${matched.lines[matched.index].slice(0, 80)}`);
    }
  }

  /** Spawns the step's pane and, with `submit`, submits its prompt once the program takes input. */
  async #spawn(s: StepInstance, r: StepReport): Promise<{ link: HostLink; id: number; after: null }> {
    const link = this.#opts.hosts.link(s.host);
    const spawned = (this.#spawning.get(link) ?? Promise.resolve()).then(() =>
      spawnStepPane(link, this.#plan, s)
    );
    this.#spawning.set(link, spawned.catch(() => {}));
    const id = await spawned;
    this.#panes.set(s.key, { link, id });
    r.surface_id = id;
    this.#opts.progress.update(r, `pane ${id}${s.host === null ? "" : ` on ${s.host}`}`);
    if (s.submit && s.pane!.prompt !== undefined) {
      await waitForInput(link, id, this.#stepAbort.signal);
      const text = substitute(s.pane!.prompt, this.#values);
      const res = await link.call("surface.send_text", {
        surface_id: id,
        text,
        submit: true,
      });
      r.submitted = res.status ?? "sent";
      if (res.status === "stalled") throw new StepFailure(`prompt not taken by the agent: ${res.evidence}`);
      this.#opts.progress.update(r, `prompt ${r.submitted}`);
    }
    return { link, id, after: null };
  }

  /** Sends the step's text to its target step's pane, on whichever host that lives. */
  async #send(s: StepInstance, r: StepReport): Promise<{ link: HostLink; id: number; after: Mark | null }> {
    const send = s.send!;
    // Validation made the target a step this one needs.
    const target = this.#panes.get(send.target);
    if (target === undefined) throw new StepFailure(`step "${send.target}" has no pane to send to`);
    const { link, id } = target;
    r.surface_id = id;
    r.host = link.host;
    // The barrier looks only at what the pane prints after the send.
    const after = s.ready ? await markOf(link, id) : null;
    const res = await link.call("surface.send_text", {
      surface_id: id,
      text: substitute(send.text, this.#values),
      submit: send.submit,
    });
    if (send.submit) r.submitted = res.status ?? "sent";
    if (res.status === "stalled") throw new StepFailure(`text not taken by the agent: ${res.evidence}`);
    return { link, id, after };
  }

  /** A `message` step: put it on the host's queue and wait for its result (docs/paneio.md). */
  async #runMessage(s: StepInstance, r: StepReport): Promise<void> {
    const m = s.message!;
    const info = await this.#opts.hosts.link(s.host).call("queue.info", {});
    if (!info.root) {
      throw new StepFailure(
        "the host has no message queue: start it with serve --queue <dir> or set queue.root",
      );
    }
    const { sendAndWait } = await import("../paneio/flow_step.ts");
    const stop = this.#stepAbort.signal;
    const timeout = new Promise<never>((_, reject) => {
      const t = setTimeout(
        () => reject(new StepFailure(`message to "${m.to}" had no result within ${m.timeout_secs}s`, true)),
        m.timeout_secs * 1000,
      );
      stop.addEventListener("abort", () => clearTimeout(t));
    });
    const done = await Promise.race([
      sendAndWait(info.root, { ...m, content: substitute(m.content, this.#values) }, stop, (id) => {
        this.#opts.progress.update(r, `message ${id} to ${m.to}`);
      }),
      timeout,
      aborted(stop).then(() => {
        throw new StepFailure("interrupted");
      }),
    ]);
    if (done.status === "failed") {
      throw new StepFailure(`message ${done.id} to "${m.to}" failed: ${done.reason}`);
    }
    r.submitted = "completed";
    if (m.var) {
      this.#store(s, m.var, done.result);
      this.#opts.progress.update(r, `\${${m.var}} = result of ${done.id}`);
    } else this.#opts.progress.update(r, `message ${done.id} completed`);
  }

  /** Stores a captured value; a foreach step's, per item. */
  #store(s: StepInstance, name: string, value: string): void {
    if (s.item === null) {
      this.#values.set(name, value);
      return;
    }
    const got = (this.#values.get(name) as Map<string, string> | undefined) ?? new Map<string, string>();
    got.set(s.item, value);
    // Items in the flow's order, not in the order they finished (for ${var} and the report).
    const order = this.#plan.steps.filter((x) => x.id === s.id).map((x) => x.item);
    this.#values.set(name, new Map([...got].sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))));
  }
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
