/**
 * The host's queue service: delivers each pending message to the pane named
 * like its recipient once that pane is ready. The queue's files are kept by
 * the queue worker (./queue_worker.ts: the watch, the reads and YAML parses,
 * the locked fsynced writes), which sends this side each file's messages
 * as they change (./mirror.ts keeps them); nothing here reads a queue file
 * or waits on an fsync. A message is marked `in_progress` (fsynced) before a
 * byte is typed, so a crash can never type it twice; it ends `completed` with the
 * turn's result in `metadata.result`, or `failed` with `metadata.reason`.
 * A message found `in_progress` at start is marked failed with reason
 * `interrupted` unless the recipient's screen shows it was received, in
 * which case its turn is awaited as usual. Status files follow the panes'
 * real states.
 *
 * @module
 */
import { agentWorking, turnEnded } from "../agents/readiness.ts";
import type { Surface } from "../core/registry.ts";
import { parseReply, waitOnPane } from "./ask.ts";
import type { PaneHost } from "./pane_access.ts";
import { isBarePrompt } from "../spec/prompts.ts";
import type { FromWorker, ToWorker, UpdateRequest } from "./queue_files.ts";
import { QueueMirror } from "./mirror.ts";
import type { AgentStatus, Located, Message } from "./store.ts";

/** Settings of the service. */
export interface QueueSettings {
  root: string;
  graceMs: number;
  timeoutMs: number;
}

/** PANEFLOW_QUEUE_TRACE=1 logs the time each delivery step took (for bench/paneio.ts). */
const TRACE = Deno.env.get("PANEFLOW_QUEUE_TRACE") === "1";
const now = () => new Date().toISOString();
const wallNow = () => performance.timeOrigin + performance.now();

/** How far along a status is: a file that shows an earlier one than this host wrote was written over. */
const RANK: Record<Message["status"], number> = { pending: 0, in_progress: 1, completed: 2, failed: 2 };

/** The queue service of one host. */
export class QueueService {
  #mirror = new QueueMirror();
  #worker: Worker | null = null;
  #seq = 0;
  #replies = new Map<number, { resolve: (m: Message | null) => void; reject: (e: Error) => void }>();
  /** Recipients with a delivery loop running. */
  #busy = new Set<string>();
  /** Message ids this process is delivering or waiting on. */
  #active = new Set<string>();
  /** When a pending message to a recipient with no live pane was first seen. */
  #orphanSince = new Map<string, number>();
  #orphanTimers = new Map<string, ReturnType<typeof setTimeout>>();
  #stopped = false;
  #statusTimer: ReturnType<typeof setTimeout> | null = null;
  #statusSent = new Map<string, string>();
  #current = new Map<string, string>();
  #stopListen: () => void = () => {};
  #lock: Deno.FsFile | null = null;
  #lastEventAt = 0;
  readonly startedAt = Date.now();

  constructor(private readonly _host: PaneHost, readonly settings: QueueSettings) {}

  get root(): string {
    return this.settings.root;
  }

  /** Claims the root (one host per queue), starts the queue worker, recovers and delivers. */
  async start(): Promise<void> {
    await Deno.mkdir(`${this.root}/queue`, { recursive: true });
    this.#lock = await Deno.open(`${this.root}/queue/.host.lock`, { write: true, create: true, mode: 0o644 });
    if (!(await this.#lock.tryLock(true))) {
      this.#lock.close();
      this.#lock = null;
      throw new Error(`Another paneflow host delivers the queue under ${this.root}`);
    }
    const worker = new Worker(new URL("./queue_worker.ts", import.meta.url).href, { type: "module" });
    this.#worker = worker;
    const started = new Promise<string | null>((resolve) => {
      worker.onmessage = (e: MessageEvent<FromWorker>) => {
        if (e.data.t === "started") resolve(e.data.error);
        else this.#fromWorker(e.data);
      };
      worker.onerror = (e) => {
        e.preventDefault();
        this._host.log(`queue: the queue worker failed: ${e.message}`);
        resolve(e.message);
        this.#failAll(new Error(`the queue worker failed: ${e.message}`));
      };
    });
    this.#post({ t: "start", root: this.root });
    const error = await started;
    if (error) {
      this.dispose();
      throw new Error(error);
    }
    this.#stopListen = this._host.listen((ev) => {
      if (
        ev.type === "surface_created" || ev.type === "surface_renamed" || ev.type === "agent_state" ||
        ev.type === "surface_exited" || ev.type === "surface_closed" || ev.type === "ai.stop"
      ) {
        this.#kick();
        this.#scheduleStatus();
      }
    });
    // A message left in progress by a host that died is never retyped silently.
    for (const f of this.#mirror.files.values()) {
      for (const m of f.list) {
        if (m.msg.status === "in_progress" && !this.#active.has(m.msg.id)) {
          // Its recipient gets nothing else until this one is settled (order per sender).
          this.#busy.add(m.msg.to);
          void this.#recover(m);
        }
      }
    }
    this.#kick();
    this.#scheduleStatus();
  }

  /** Stops delivering; deliveries in flight stop at their next step. */
  dispose(): void {
    this.#stopped = true;
    this.#stopListen();
    if (this.#statusTimer) clearTimeout(this.#statusTimer);
    for (const t of this.#orphanTimers.values()) clearTimeout(t);
    const worker = this.#worker;
    this.#worker = null;
    if (worker) {
      const stop = () => {
        try {
          worker.terminate();
        } catch { /* gone */ }
      };
      // A status change being written is finished first (it is atomic either way).
      if (this.#replies.size) {
        const t = setTimeout(stop, 2000);
        const check = setInterval(() => {
          if (this.#replies.size) return;
          clearInterval(check);
          clearTimeout(t);
          stop();
        }, 10);
      } else stop();
    }
    this.#lock?.close();
  }

  #post(m: ToWorker) {
    this.#worker?.postMessage(m);
  }

  #failAll(e: Error) {
    for (const r of this.#replies.values()) r.reject(e);
    this.#replies.clear();
  }

  /** Asks the worker for a status change; resolves after the host has seen the file's new view. */
  #update(req: UpdateRequest): Promise<Message | null> {
    if (!this.#worker) return Promise.reject(new Error("the queue is stopped"));
    const seq = ++this.#seq;
    return new Promise((resolve, reject) => {
      this.#replies.set(seq, { resolve, reject });
      this.#post({ t: "update", seq, ...req });
    });
  }

  #fromWorker(m: FromWorker) {
    switch (m.t) {
      case "file": {
        const changed = this.#mirror.apply(m);
        if (!changed) break;
        for (const c of changed) this.#checkWrittenOver(c);
        if (TRACE && m.eventAt) this.#lastEventAt = m.eventAt;
        this.#kick();
        this.#scheduleStatus();
        break;
      }
      case "gone":
        if (this.#mirror.files.has(m.file)) {
          this.#mirror.drop(m.file);
          this.#kick();
          this.#scheduleStatus();
        }
        break;
      case "log":
        this._host.log(m.line);
        break;
      case "reply": {
        const r = this.#replies.get(m.seq);
        this.#replies.delete(m.seq);
        if (m.error) r?.reject(new Error(m.error));
        else r?.resolve(m.msg);
        break;
      }
    }
  }

  /** A message this host moved on that the file shows at an earlier status: written back. */
  #checkWrittenOver(m: Located) {
    const key = `${m.file}\0${m.msg.id}`;
    const known = this.#mirror.wrote.get(key);
    if (!known || RANK[m.msg.status] >= RANK[known.status]) return;
    this._host.log(
      known.written
        ? `queue: ${m.file}:${m.line}: ${m.msg.id} shows status ${m.msg.status} but this host already set it ` +
          `${known.status} (the file was written over with an older copy): it is not delivered again; ` +
          `status ${known.status} written back`
        : `queue: ${m.file}:${m.line}: ${m.msg.id} ended ${known.status} while its file could not be ` +
          `written; status ${known.status} written now`,
    );
    const from = (Object.keys(RANK) as Message["status"][]).filter((s) => RANK[s] < RANK[known.status]);
    this.#set(m, from, known.status, known.metadata)
      .catch((e) => this._host.log(`queue: ${m.msg.id}: ${(e as Error).message}`));
  }

  /** Changes a message's status through the worker and remembers what was written. */
  async #set(
    m: Located,
    from: Message["status"][],
    status: Message["status"],
    metadata: Record<string, unknown>,
  ) {
    const key = `${m.file}\0${m.msg.id}`;
    const msg = await this.#update({ file: m.file, id: m.msg.id, from, status, metadata });
    if (msg) this.#mirror.wrote.set(key, { status: msg.status, metadata: msg.metadata, written: true });
    else if (status === "completed" || status === "failed") {
      // Not written (the file has a problem now, e.g. a human is editing it): written when the
      // file shows the message again at an earlier status.
      const prior = this.#mirror.wrote.get(key);
      if (!prior || RANK[prior.status] < RANK[status]) {
        this.#mirror.wrote.set(key, {
          status,
          metadata: { ...prior?.metadata, ...metadata },
          written: false,
        });
        this._host.log(
          `queue: ${m.file}: ${m.msg.id} ended ${status} but the file could not be changed (it has a problem, ` +
            `or the message is gone); the status is written when the file shows the message again`,
        );
      }
    }
    return msg;
  }

  /** Every message as last read. */
  snapshot(): Located[] {
    return this.#mirror.all();
  }

  /** Starts a delivery loop for each recipient with pending messages and none running. */
  #kick() {
    if (this.#stopped) return;
    for (const to of this.#mirror.recipients()) {
      if (this.#busy.has(to)) continue;
      this.#busy.add(to);
      this.#drive(to).then(
        (why) => {
          this.#busy.delete(to);
          // Something new may have come as the loop ended (a wait for a pane is woken by its event).
          if (why === "empty" && this.#mirror.next(to, (m) => this.#deliverable(m))) {
            queueMicrotask(() => this.#kick());
          }
        },
        (e) => {
          this.#busy.delete(to);
          this._host.log(`queue: delivery to ${to} failed: ${(e as Error).message}`);
        },
      );
    }
  }

  /** Whether a message waits for delivery by this host. */
  #deliverable(m: Located): boolean {
    return m.msg.status === "pending" && !this.#active.has(m.msg.id) &&
      !this.#mirror.wrote.has(`${m.file}\0${m.msg.id}`);
  }

  /** Delivers `to`'s pending messages one at a time while there are any. */
  async #drive(to: string): Promise<"empty" | "waiting"> {
    while (!this.#stopped) {
      const m = this.#mirror.next(to, (m) => this.#deliverable(m));
      if (!m) return "empty";
      const s = this._host.byName(to);
      if (!s || s.exit) {
        const since = this.#orphanSince.get(to) ?? Date.now();
        this.#orphanSince.set(to, since);
        const left = since + this.settings.graceMs - Date.now();
        if (left > 0) {
          // Woken by a pane created or renamed (the listener kicks), or re-checked at the deadline
          // (one timer per recipient, however often it is kicked meanwhile).
          if (!this.#orphanTimers.has(to)) {
            this.#orphanTimers.set(
              to,
              setTimeout(() => {
                this.#orphanTimers.delete(to);
                this.#kick();
              }, left + 10),
            );
          }
          return "waiting";
        }
        const why = s ? `pane "${to}" (${s.id}) has exited` : `no pane named "${to}"`;
        await this.#finish(m, "failed", {
          reason: `${why} after ${Math.round(this.settings.graceMs / 1000)} s`,
        });
        continue;
      }
      this.#orphanSince.delete(to);
      const ready = await this._host.ready(s);
      if (!ready.ready) {
        // Waits for the pane's events; a busy pane keeps its messages pending.
        await waitOnPane(this._host, s, Date.now() + 5000, async () => {
          if (this.#stopped || !this._host.alive(s)) return true;
          return (await this._host.ready(s)).ready ? true : null;
        });
        continue;
      }
      const readyAt = TRACE ? wallNow() : 0;
      await this.#deliver(m, s, readyAt, ready.total);
    }
    return "empty";
  }

  /** Marks a message in progress, types it, and waits for the turn's end. */
  async #deliver(m: Located, s: Surface, readyAt: number, total?: number): Promise<void> {
    const id = m.msg.id;
    this.#active.add(id);
    try {
      // The claim is fsynced (by the worker) before a byte is typed; the row typing starts from is
      // read meanwhile.
      const [from, modes, claimed] = await Promise.all([
        // The pane is at its prompt since the readiness check: its length then is its length now.
        (total !== undefined ? Promise.resolve(total) : this._host.total(s)).then((t) => Math.max(0, t - 1)),
        this._host.modes(s),
        this.#set(m, ["pending"], "in_progress", { delivered_at: now(), surface_id: s.id }),
      ]);
      const claimedAt = TRACE ? wallNow() : 0;
      if (!claimed) return; // changed or removed by someone else meanwhile
      // What the file holds now is what is typed (the view that started this may be older).
      const cm: Located = { ...m, msg: claimed };
      this.#current.set(s.name ?? m.msg.to, id);
      this.#scheduleStatus();
      let typed;
      try {
        typed = await this._host.type(s, claimed.content.replace(/\n+$/, ""), true, {
          modes,
          detected: true,
        });
        if (TRACE) {
          const t = wallNow();
          this._host.log(
            `trace ${id}: event->ready ${(readyAt - this.#lastEventAt).toFixed(1)} claim ${
              (claimedAt - readyAt).toFixed(1)
            } type ${(t - claimedAt).toFixed(1)} ms`,
          );
        }
      } catch (e) {
        await this.#finish(cm, "failed", { reason: `typing failed: ${(e as Error).message}` });
        return;
      }
      if (typed.status === "stalled") {
        await this.#finish(cm, "failed", { reason: `the agent did not take the message: ${typed.evidence}` });
        return;
      }
      await this.#awaitTurn(cm, s, from, typed.agent !== null, typed.text);
    } finally {
      this.#active.delete(id);
      this.#current.delete(s.name ?? m.msg.to);
      this.#scheduleStatus();
    }
  }

  /**
   * Waits until the recipient's turn ends and records how. `typed` is what went into the pane,
   * when known (a large prompt's reference to its file, which is what the screen echoes).
   */
  async #awaitTurn(m: Located, s: Surface, from: number, agent: boolean, typed?: string): Promise<void> {
    const deadline = Date.now() + this.settings.timeoutMs;
    const content = typed ?? m.msg.content.replace(/\n+$/, "");
    if (agent) {
      let sawTurn = false;
      const stop = this._host.listen((ev) => {
        if (ev.surface_id === s.id && (ev.state === "thinking" || ev.type === "ai.prompt_submit")) {
          sawTurn = true;
        }
      });
      try {
        const started = Date.now();
        const end = await waitOnPane(this._host, s, deadline, async () => {
          if (this.#stopped) return { stopped: true as const };
          if (!this._host.alive(s)) return { exited: true as const };
          const st = this._host.status(s);
          if (agentWorking(st.state)) sawTurn = true;
          if (st.state === "errored") return { error: st.message ?? "the agent's turn failed" };
          // A turn too short to be seen busy: the tracker's state still reached finished after the send.
          if ((sawTurn || Date.now() - started > 3000) && turnEnded(st.state)) {
            return { result: st.last_result ?? await this.#screenResult(s, content) };
          }
          return null;
        });
        if (!end) return void await this.#finish(m, "failed", { reason: "timeout" });
        if ("stopped" in end) return;
        if ("exited" in end) return void await this.#finish(m, "failed", { reason: this.#exitReason(s) });
        if ("error" in end) {
          return void await this.#finish(m, "failed", { reason: `agent errored: ${end.error}` });
        }
        await this.#finish(m, "completed", { result: end.result });
      } finally {
        stop();
      }
      return;
    }
    const end = await waitOnPane(this._host, s, deadline, async () => {
      if (this.#stopped) return { stopped: true as const };
      if (!this._host.alive(s)) return { exited: true as const };
      const rows = await this._host.rows(s, from);
      const lines = rows.lines.slice(Math.max(0, from - rows.from));
      const echo = parseReply(lines, content, "\u0000", this._host.rules).echoEnd;
      if (echo < 0) return null;
      const after = lines.slice(echo + 1);
      const last = [...after].reverse().find((l) => l.trim() !== "");
      if (last === undefined || !isBarePrompt(last, this._host.rules)) return null;
      if (!(await this._host.ready(s)).ready) return null;
      return { result: this.#outputOf(after) };
    });
    if (!end) return void await this.#finish(m, "failed", { reason: "timeout" });
    if ("stopped" in end) return;
    if ("exited" in end) return void await this.#finish(m, "failed", { reason: this.#exitReason(s) });
    await this.#finish(m, "completed", { result: end.result });
  }

  #exitReason(s: Surface): string {
    return s.exit ? `pane exited (exit code ${s.exit.exit_code})` : "pane closed";
  }

  /** The rows after the echo, without bare prompt lines and blank ends. */
  #outputOf(rows: string[]): string {
    const kept = rows.map((l) => l.trimEnd()).filter((l) => !isBarePrompt(l, this._host.rules));
    while (kept.length && kept[0] === "") kept.shift();
    while (kept.length && kept.at(-1) === "") kept.pop();
    return kept.join("\n");
  }

  /** An agent's reply as its screen shows it (when no hook reported the turn's result). */
  async #screenResult(s: Surface, content: string): Promise<string> {
    const total = await this._host.total(s);
    const rows = await this._host.rows(s, Math.max(0, total - 1000));
    const lines = rows.lines;
    const echo = parseReply(lines, content, "\u0000", this._host.rules, { lastEcho: true }).echoEnd;
    return this.#outputOf(lines.slice(echo + 1));
  }

  async #finish(m: Located, status: "completed" | "failed", meta: { result?: string; reason?: string }) {
    await this.#set(m, ["pending", "in_progress"], status, { ...meta, finished_at: now() });
    if (status === "failed") this._host.log(`queue: ${m.msg.id} to ${m.msg.to} failed: ${meta.reason}`);
  }

  /** A message found in progress at start: received (its turn is awaited) or interrupted. */
  async #recover(m: Located): Promise<void> {
    this.#active.add(m.msg.id);
    try {
      const s = await this.#paneNamed(m.msg.to, Date.now() + this.settings.graceMs);
      if (this.#stopped) return;
      const content = m.msg.content.replace(/\n+$/, "");
      if (s && !s.exit && await this._host.shows(s, content)) {
        this._host.log(
          `queue: ${m.msg.id} was in progress at start and pane "${m.msg.to}" shows it: awaiting its turn`,
        );
        this.#current.set(m.msg.to, m.msg.id);
        await this.#awaitTurn(m, s, 0, this._host.agentOf(s) !== null);
        return;
      }
      await this.#finish(m, "failed", { reason: "interrupted" });
    } finally {
      this.#active.delete(m.msg.id);
      this.#current.delete(m.msg.to);
      this.#busy.delete(m.msg.to);
      this.#kick();
    }
  }

  /** The live pane named `name`, once there is one (woken by the host's events), or null at the deadline. */
  #paneNamed(name: string, deadline: number): Promise<Surface | null> {
    const live = () => {
      const s = this._host.byName(name);
      return s && !s.exit ? s : null;
    };
    const now = live();
    if (now) return Promise.resolve(now);
    return new Promise((resolve) => {
      const done = (s: Surface | null) => {
        clearTimeout(timer);
        stop();
        resolve(s);
      };
      const stop = this._host.listen(() => {
        if (this.#stopped) return done(null);
        const s = live();
        if (s) done(s);
      });
      const timer = setTimeout(() => done(this._host.byName(name)), Math.max(0, deadline - Date.now()));
    });
  }

  #scheduleStatus() {
    if (this.#statusTimer || this.#stopped) return;
    this.#statusTimer = setTimeout(() => {
      this.#statusTimer = null;
      this.#writeStatuses().catch((e) => this._host.log(`queue: status files: ${(e as Error).message}`));
    }, 100);
  }

  /** The status of one agent from its pane's real state and the queue's record. */
  async statusOf(name: string): Promise<AgentStatus> {
    const counts = this.#mirror.countsOf(name) ?? { completed: 0, failed: 0, sent: 0, received: 0 };
    const s = this._host.byName(name);
    const current = this.#current.get(name) ?? null;
    let state: AgentStatus["state"] = "idle";
    if (current) state = "working";
    else if (s && !s.exit) {
      const st = this._host.status(s);
      if (this._host.agentOf(s)) {
        state = st.state === "finished"
          ? "completed"
          : st.state === "errored"
          ? "error"
          : st.state === "idle"
          ? "idle"
          : "working";
      } else state = (await this._host.ready(s)).ready ? "idle" : "working";
    } else if (s?.exit) state = s.exit.exit_code === 0 ? "completed" : "error";
    return {
      agent_name: name,
      state,
      current_task: current,
      last_updated: now(),
      statistics: {
        tasks_completed: counts.completed,
        tasks_failed: counts.failed,
        messages_sent: counts.sent,
        messages_received: counts.received,
        uptime_seconds: s ? Math.round((Date.now() - s.createdAt) / 1000) : 0,
      },
    };
  }

  /** Sends the worker the status files whose content changed (not counting last_updated); it writes them. */
  async #writeStatuses() {
    for (const name of this.#mirror.names()) {
      if (this.#stopped) return;
      const st = await this.statusOf(name);
      const key = JSON.stringify({
        ...st,
        last_updated: null,
        statistics: { ...st.statistics, uptime_seconds: 0 },
      });
      if (this.#statusSent.get(name) === key) continue;
      this.#statusSent.set(name, key);
      this.#post({ t: "status", name, status: st });
    }
  }

  /** Message counts by status, for `queue.info`. */
  counts(): Record<Message["status"], number> {
    return this.#mirror.byStatus();
  }
}
