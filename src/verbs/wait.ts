import { Client } from "../client/client.ts";
import { listPanes, matchPanes, type PaneInfo } from "../client/selectors.ts";
import { CliFailure, RpcError, UsageError } from "../errors.ts";
import { ExitCode } from "../spec/codes.ts";
import { defineVerb, printJson } from "./_verb.ts";
import { paneIdle } from "../agents/readiness.ts";
import { later } from "../client/timer.ts";

/** Lines scanned for `--pattern` (docs/cli.md, Waiting and events). */
const SCAN_LINES = 500;
/** Poll interval when no event arrives (docs/cli.md, Waiting and events). */
const POLL_MS = 500;
/** Quiet time that counts as idle for a pane without a tracked agent. */
export const DEFAULT_SETTLE_MS = 1500;
/** A `checkedGeneration` no generation equals: the screen must be read again. */
const STALE = -2;

interface Watch {
  pane: PaneInfo;
  match: { line: number; text: string } | null;
  idle: boolean;
  lastChangeAt: number;
  generation: number;
  checkedGeneration: number;
  agent: boolean;
  done: boolean;
  /** Why the pane can no longer satisfy the wait (it exited or closed first). */
  ended: string | null;
}

export default defineVerb({
  name: "wait",
  usage: "paneflow wait --match <sel> (--pattern <regex> | --idle) [--any|--all] [--timeout <secs>]",
  details: [
    "--pattern scans the newest 500 lines on each output change (and every 500 ms).",
    "--idle waits until the pane's agent is no longer working; for a pane without a",
    `tracked agent, until its output has been quiet for --settle ms (default ${DEFAULT_SETTLE_MS}).`,
    "Both together need both. A selector matching several panes needs --any or --all.",
    "Exit 4 on timeout; 1 if a pane exits or closes first (with --any, once no pane is left",
    "that could match); 3 if the selector matches nothing, or several panes without --any/--all.",
  ].join("\n"),
  options: {
    match: { type: "string", short: "m", value: "<sel>", description: "Panes to wait on (selector)" },
    pattern: {
      type: "string",
      short: "p",
      value: "<regex>",
      description: "JavaScript regex, tested per line",
    },
    idle: { type: "boolean", description: "Wait until the pane is no longer working" },
    any: { type: "boolean", description: "Done when any matched pane is done" },
    all: { type: "boolean", description: "Done when every matched pane is done" },
    timeout: { type: "number", short: "t", value: "<secs>", description: "Give up after this long (exit 4)" },
    settle: {
      type: "number",
      value: "<ms>",
      description: `Quiet time that counts as idle (default ${DEFAULT_SETTLE_MS})`,
    },
    json: { type: "boolean", description: "Print the result as JSON" },
  },
  positionals: [],
  async run({ opts }) {
    const spec = waitSpec(opts);
    const started = Date.now();
    // `--match box:sel`: the panes of the config's host "box", over ssh.
    const { host, selector } = spec.match.includes(":")
      ? await (await import("../client/named_hosts.ts")).splitHostSelector(spec.match)
      : { host: null, selector: spec.match };
    // One connection: the host answers calls on it after it subscribed, events in between.
    const client = await Client.connect(host ?? undefined);
    const progress = spec.json ? null : showProgress(`waiting for ${spec.what} on ${spec.match}`, started);
    try {
      const panes = await choosePanes(client, selector, spec);
      // Subscribe before checking current state so nothing slips through the gap.
      await client.subscribe({ surfaces: panes.map((p) => p.surface_id) });
      const done = await new PaneWait(client, spec, panes).run(started);
      progress?.stop();
      printResult(done, spec, started);
      return 0;
    } finally {
      progress?.stop();
      client.close();
    }
  },
});

/** What `paneflow wait` waits for, from its options. */
export interface WaitSpec {
  match: string;
  /** `--pattern`, compiled. */
  regex: RegExp | null;
  pattern: string | undefined;
  idle: boolean;
  any: boolean;
  all: boolean;
  /** Seconds, as given. */
  timeout: number | undefined;
  /** Quiet time that counts as idle, in ms. */
  settle: number;
  json: boolean;
  /** How the wait reads in messages: `pattern /x/ and idle`. */
  what: string;
}

/** The wait the options ask for; pure, throws {@link UsageError}. */
export function waitSpec(opts: {
  match?: string;
  pattern?: string;
  idle: boolean;
  any: boolean;
  all: boolean;
  timeout?: number;
  settle?: number;
  json: boolean;
}): WaitSpec {
  if (!opts.match) throw new UsageError("Missing --match <sel> for paneflow wait");
  if (!opts.pattern && !opts.idle) {
    throw new UsageError("Nothing to wait for: give --pattern <regex>, --idle, or both");
  }
  if (opts.any && opts.all) throw new UsageError("Options --any and --all exclude each other");
  if (opts.timeout !== undefined && opts.timeout <= 0) {
    throw new UsageError("Option --timeout must be a positive number of seconds");
  }
  if (opts.settle !== undefined && opts.settle < 0) {
    throw new UsageError("Option --settle must be zero or more milliseconds");
  }
  let regex: RegExp | null = null;
  if (opts.pattern !== undefined) {
    try {
      regex = new RegExp(opts.pattern);
    } catch (e) {
      throw new UsageError(`Invalid --pattern: ${(e as Error).message}`, { cause: e });
    }
  }
  const what = [regex ? `pattern /${opts.pattern}/` : "", opts.idle ? "idle" : ""].filter(Boolean).join(
    " and ",
  );
  return {
    match: opts.match,
    regex,
    pattern: opts.pattern,
    idle: opts.idle,
    any: opts.any,
    all: opts.all,
    timeout: opts.timeout,
    settle: opts.settle ?? DEFAULT_SETTLE_MS,
    json: opts.json,
    what,
  };
}

/** The panes the selector matches: at least one, and one unless --any or --all. */
async function choosePanes(client: Client, selector: string, spec: WaitSpec): Promise<PaneInfo[]> {
  const panes = matchPanes(selector, await listPanes(client));
  if (panes.length === 0) throw new CliFailure(`No pane matches "${spec.match}"`, ExitCode.NotFound);
  if (panes.length > 1 && !spec.any && !spec.all) {
    const list = panes.map((p) => `${p.surface_id}${p.name ? ` (${p.name})` : ""}`).join(", ");
    throw new CliFailure(
      `Selector "${spec.match}" matches ${panes.length} panes (${list}); add --any or --all`,
      ExitCode.NotFound,
    );
  }
  return panes;
}

/** Prints the panes that satisfied the wait: one line each, or JSON. */
function printResult(done: Watch[], spec: WaitSpec, started: number): void {
  if (spec.json) {
    printJson({
      matched: done.map((w) => ({
        surface_id: w.pane.surface_id,
        name: w.pane.name,
        line: w.match?.line ?? null,
        text: w.match?.text ?? null,
        idle: spec.idle ? w.idle : null,
      })),
      elapsed_ms: Date.now() - started,
    });
    return;
  }
  for (const w of done) {
    const who = `${w.pane.surface_id}${w.pane.name ? ` (${w.pane.name})` : ""}`;
    console.log(w.match ? `${who}: line ${w.match.line}: ${w.match.text}` : `${who}: idle`);
  }
}

/** One wait on subscribed panes: each pane's watch, brought up to date by events and polls. */
class PaneWait {
  readonly #client: Client;
  readonly #spec: WaitSpec;
  readonly #watches = new Map<number, Watch>();

  constructor(client: Client, spec: WaitSpec, panes: PaneInfo[]) {
    this.#client = client;
    this.#spec = spec;
    for (const pane of panes) {
      this.#watches.set(pane.surface_id, {
        pane,
        match: null,
        idle: false,
        lastChangeAt: Date.now(),
        generation: -1,
        checkedGeneration: STALE,
        agent: false,
        done: false,
        ended: null,
      });
    }
  }

  /** Waits until the wait is satisfied; returns the watches that are done. */
  async run(started: number): Promise<Watch[]> {
    const spec = this.#spec;
    const deadline = spec.timeout === undefined ? Infinity : started + spec.timeout * 1000;
    await this.#resync();
    while (!this.#finished()) {
      const now = Date.now();
      if (now >= deadline) {
        throw new CliFailure(
          `Timed out after ${spec.timeout}s waiting for ${spec.what} on ${spec.match}`,
          ExitCode.Timeout,
        );
      }
      // Wake at the next poll, or when a quiet pane would reach the settle time.
      let wake = Math.min(POLL_MS, deadline - now);
      for (const w of this.#watches.values()) {
        if (spec.idle && !w.done && !w.ended && !w.agent) {
          wake = Math.min(wake, Math.max(1, w.lastChangeAt + spec.settle - now));
        }
      }
      const msg = await this.#client.nextWithin(wake);
      if (msg === null) throw this.#client.lost("while waiting");
      if (msg !== undefined) {
        await this.#onEvent(msg.value as { type: string; surface_id?: number; exit_code?: number });
        continue;
      }
      for (const w of this.#watches.values()) {
        w.checkedGeneration = STALE;
        await this.#checkOrResync(w);
      }
    }
    return [...this.#watches.values()].filter((w) => w.done);
  }

  async #onEvent(ev: { type: string; surface_id?: number; exit_code?: number }): Promise<void> {
    const w = ev.surface_id === undefined ? undefined : this.#watches.get(ev.surface_id);
    if (ev.type === "dropped") return await this.#resync();
    if (w && ev.type === "surface_changed") {
      w.lastChangeAt = Date.now();
      w.generation = (ev as { output_generation?: number }).output_generation ?? w.generation;
    }
    if (w && !w.ended && (ev.type === "surface_exited" || ev.type === "surface_closed")) {
      // Judged on the final screen: a marker printed just before the exit still counts.
      w.checkedGeneration = STALE;
      await this.#check(w).catch(() => {});
      if (!w.done) {
        this.#ended(w, ev.type === "surface_closed" ? "was closed" : `exited (exit code ${ev.exit_code})`);
      }
      return;
    }
    if (w) await this.#checkOrResync(w);
  }

  /** Brings a watch up to date: the screen against the pattern, then the status for --idle. */
  async #check(w: Watch): Promise<void> {
    if (w.done || w.ended) return;
    const { regex, idle } = this.#spec;
    // The screen first, then the status: a status taken before output that
    // the read already shows would call a pane idle the moment its marker
    // arrives, mid-burst.
    let readGeneration = -1;
    if (regex && w.checkedGeneration !== w.generation) readGeneration = await this.#matchScreen(w, regex);
    else if (!regex) w.checkedGeneration = w.generation;
    if (idle) {
      const status = await this.#client.call("surface.status", { surface_id: w.pane.surface_id });
      const verdict = paneIdle(status, this.#spec.settle);
      w.agent = verdict.agent;
      if (!w.agent && status.output_generation < readGeneration) {
        // The host has not yet accounted for output the read saw: it is fresh.
        w.lastChangeAt = Date.now();
        w.idle = false;
      } else {
        w.lastChangeAt = Date.now() - status.idle_ms;
        w.idle = verdict.idle;
      }
    }
    w.done = (!regex || w.match !== null) && (!idle || w.idle);
  }

  /** Reads the pane and finds the newest line that matches; returns the generation read. */
  async #matchScreen(w: Watch, regex: RegExp): Promise<number> {
    const r = await this.#client.call(
      "surface.read",
      { surface_id: w.pane.surface_id, lines: SCAN_LINES, fenced: false, join_wrapped: true },
    );
    w.generation = r.output_generation;
    w.checkedGeneration = r.output_generation;
    const lines = r.text.split("\n");
    w.match = null;
    for (let i = lines.length - 1; i >= 0; i--) {
      regex.lastIndex = 0;
      if (regex.test(lines[i])) {
        w.match = { line: r.total_lines - lines.length + i + 1, text: lines[i] };
        break;
      }
    }
    return r.output_generation;
  }

  #finished(): boolean {
    const all = [...this.#watches.values()];
    return this.#spec.all ? all.every((w) => w.done) : all.some((w) => w.done);
  }

  /**
   * A pane that ends unsatisfied fails the wait, except under --any while
   * another pane still can satisfy it.
   */
  #ended(w: Watch, how: string): void {
    w.ended = how;
    if (this.#spec.any && [...this.#watches.values()].some((x) => !x.ended)) return;
    throw new CliFailure(`Pane ${w.pane.surface_id} ${how} before the wait was satisfied`);
  }

  /**
   * Checks every pane against a fresh listing: one that exited or closed
   * (before the subscription, or in events shed as `dropped`) ends the
   * wait unless the wait is already satisfied.
   */
  async #resync(): Promise<void> {
    const now = new Map((await listPanes(this.#client)).map((p) => [p.surface_id, p]));
    const gone: [Watch, string][] = [];
    for (const w of this.#watches.values()) {
      if (w.ended) continue;
      const p = now.get(w.pane.surface_id);
      w.checkedGeneration = STALE;
      if (!p) {
        gone.push([w, "was closed"]);
        continue;
      }
      await this.#check(w);
      if (p.exited) gone.push([w, `exited (exit code ${p.exit_code})`]);
    }
    if (this.#finished()) return;
    for (const [w, how] of gone) if (!w.done) this.#ended(w, how);
  }

  /** A pane closed before its event was read: the listing tells how it ended. */
  #checkOrResync(w: Watch): Promise<void> {
    return this.#check(w).catch((e) => {
      if (e instanceof RpcError) return this.#resync();
      throw e;
    });
  }
}

/**
 * A status line on stderr, redrawn every second, while stderr is a terminal
 * (a long wait shows it is alive; pipes and --json get none, as their readers are programs).
 */
function showProgress(what: string, started: number): { stop(): void } | null {
  if (!Deno.stderr.isTerminal()) return null;
  const enc = new TextEncoder();
  let drawn = false;
  const draw = (text: string) => Deno.stderr.writeSync(enc.encode(`\r\x1b[K${text}`));
  let cancel = () => {};
  const tick = () => {
    cancel = later(1000, () => {
      drawn = true;
      draw(`${what} … ${Math.round((Date.now() - started) / 1000)}s`);
      tick();
    });
  };
  tick();
  return {
    stop() {
      cancel();
      if (drawn) draw("");
      drawn = false;
    },
  };
}
