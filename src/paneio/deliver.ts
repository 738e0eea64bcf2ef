/**
 * The host's queue service: watches `queue/` (Deno.watchFs, plus a rescan
 * at start and whenever the watcher reports an overflow) and delivers each
 * pending message to the pane named like its recipient once that pane is
 * ready. A message is marked `in_progress` (fsynced) before a byte is
 * typed, so a crash can never type it twice; it ends `completed` with the
 * turn's result in `metadata.result`, or `failed` with `metadata.reason`.
 * A message found `in_progress` at start is marked failed with reason
 * `interrupted` unless the recipient's screen shows it was received, in
 * which case its turn is awaited as usual. Status files follow the panes'
 * real states.
 *
 * @module
 */
import { agentWorking, turnEnded } from "../agents/readiness.ts";
import type { Surface } from "../server/registry.ts";
import { parseReply, waitOnPane } from "./ask.ts";
import type { PaneHost } from "./host.ts";
import { isBarePrompt } from "./prompts.ts";
import {
  type AgentStatus,
  atomicWrite,
  ensureRoot,
  type Located,
  type Message,
  queueFiles,
  readQueue,
  statusFile,
  statusYaml,
  updateMessage,
} from "./store.ts";

/** Settings of the service. */
export interface QueueSettings {
  root: string;
  graceMs: number;
  timeoutMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** PANEFLOW_QUEUE_TRACE=1 logs the time each delivery step took (for bench/paneio.ts). */
const TRACE = Deno.env.get("PANEFLOW_QUEUE_TRACE") === "1";
let lastEventAt = 0;
const now = () => new Date().toISOString();

interface FileState {
  mtime: number;
  size: number;
  ino: number | null;
  messages: Located[];
  /** The problem already logged for this version of the file. */
  logged: string | null;
}

/** The queue service of one host. */
export class QueueService {
  #files = new Map<string, FileState>();
  #watcher: Deno.FsWatcher | null = null;
  /** Recipients with a delivery loop running. */
  #busy = new Set<string>();
  /** Message ids this process is delivering or waiting on. */
  #active = new Set<string>();
  /** When a pending message to a recipient with no live pane was first seen. */
  #orphanSince = new Map<string, number>();
  #recovered = false;
  #stopped = false;
  #scanning: Promise<void> | null = null;
  #rescan = false;
  #statusTimer: ReturnType<typeof setTimeout> | null = null;
  #statusWritten = new Map<string, string>();
  #current = new Map<string, string>();
  #stopListen: () => void = () => {};
  #lock: Deno.FsFile | null = null;
  readonly startedAt = Date.now();

  constructor(private readonly _host: PaneHost, readonly settings: QueueSettings) {}

  get root(): string {
    return this.settings.root;
  }

  /** Claims the root (one host per queue), recovers, scans and starts watching. */
  async start(): Promise<void> {
    await ensureRoot(this.root);
    this.#lock = await Deno.open(`${this.root}/queue/.host.lock`, { write: true, create: true, mode: 0o644 });
    if (!(await this.#lock.tryLock(true))) {
      this.#lock.close();
      this.#lock = null;
      throw new Error(`Another paneflow host delivers the queue under ${this.root}`);
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
    await this.scan();
    this.#watch();
    this.#scheduleStatus();
  }

  /** Stops watching; deliveries in flight stop at their next step. */
  dispose(): void {
    this.#stopped = true;
    this.#stopListen();
    try {
      this.#watcher?.close();
    } catch { /* closed */ }
    if (this.#statusTimer) clearTimeout(this.#statusTimer);
    this.#lock?.close();
  }

  #watch() {
    try {
      this.#watcher = Deno.watchFs(`${this.root}/queue`, { recursive: false });
    } catch (e) {
      this._host.log(`queue: cannot watch ${this.root}/queue: ${(e as Error).message}`);
      return;
    }
    (async () => {
      try {
        for await (const ev of this.#watcher!) {
          if (this.#stopped) break;
          if (ev.flag === "rescan") {
            this.#files.clear();
            void this.scan();
            continue;
          }
          if (ev.paths.some((p) => p.endsWith(".yaml") && !p.slice(p.lastIndexOf("/") + 1).startsWith("."))) {
            if (TRACE) lastEventAt = performance.now();
            void this.scan();
          }
        }
      } catch (e) {
        if (!this.#stopped) this._host.log(`queue: watcher failed: ${(e as Error).message}`);
      }
    })();
  }

  /** Re-reads changed files and starts deliveries; coalesces calls made while one runs. */
  scan(): Promise<void> {
    if (this.#scanning) {
      this.#rescan = true;
      return this.#scanning;
    }
    this.#scanning = (async () => {
      try {
        do {
          this.#rescan = false;
          await this.#scanOnce();
        } while (this.#rescan && !this.#stopped);
      } finally {
        this.#scanning = null;
      }
    })();
    return this.#scanning;
  }

  async #scanOnce() {
    const files = await queueFiles(this.root);
    const seen = new Set(files);
    for (const f of this.#files.keys()) if (!seen.has(f)) this.#files.delete(f);
    for (const file of files) await this.#load(file);
    if (!this.#recovered) {
      this.#recovered = true;
      for (const m of this.#all()) {
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

  async #load(file: string): Promise<FileState | null> {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(file);
    } catch {
      this.#files.delete(file);
      return null;
    }
    const old = this.#files.get(file);
    const mtime = info.mtime?.getTime() ?? 0;
    if (old && old.mtime === mtime && old.size === info.size && old.ino === info.ino) return old;
    const r = await readQueue(file);
    // Replaced while it was read: read again on the event the replacement makes.
    const after = await Deno.stat(file).catch(() => null);
    const changed = !after || after.ino !== info.ino || (after.mtime?.getTime() ?? 0) !== mtime ||
      after.size !== info.size;
    const state: FileState = {
      mtime: changed ? -1 : mtime,
      size: info.size,
      ino: info.ino,
      messages: r.problems.length ? [] : r.messages,
      logged: old?.logged ?? null,
    };
    if (r.problems.length && !changed) {
      const p = r.problems[0];
      const line =
        `queue: ${p.file}:${p.line}: ${p.message} (file left untouched; its messages wait until it is fixed)`;
      if (state.logged !== line) this._host.log(line);
      state.logged = line;
    } else if (!r.problems.length) state.logged = null;
    if (changed) this.#rescan = true;
    this.#files.set(file, state);
    return state;
  }

  #all(): Located[] {
    return [...this.#files.values()].flatMap((f) => f.messages);
  }

  /** Every message as last read, and the files' problems. */
  snapshot(): Located[] {
    return this.#all();
  }

  /** Starts a delivery loop for each recipient with pending messages and none running. */
  #kick() {
    if (this.#stopped) return;
    const recipients = new Set(this.#all().filter((m) => m.msg.status === "pending").map((m) => m.msg.to));
    for (const to of recipients) {
      if (this.#busy.has(to)) continue;
      this.#busy.add(to);
      this.#drive(to).catch((e) => this._host.log(`queue: delivery to ${to} failed: ${(e as Error).message}`))
        .finally(() => {
          this.#busy.delete(to);
          // Something new may have come while the loop ended.
          if (!this.#stopped && this.#all().some((m) => m.msg.status === "pending" && m.msg.to === to)) {
            setTimeout(() => this.#kick(), 50);
          }
        });
    }
  }

  /** The next pending message to `to`: file order within a sender, oldest head first across senders. */
  #next(to: string): Located | null {
    const heads: Located[] = [];
    for (const f of this.#files.values()) {
      const head = f.messages.find((m) =>
        m.msg.to === to && m.msg.status === "pending" && !this.#active.has(m.msg.id)
      );
      if (head) heads.push(head);
    }
    heads.sort((a, b) => a.msg.timestamp.localeCompare(b.msg.timestamp) || a.file.localeCompare(b.file));
    return heads[0] ?? null;
  }

  /** Delivers `to`'s pending messages one at a time while there are any. */
  async #drive(to: string): Promise<void> {
    while (!this.#stopped) {
      const m = this.#next(to);
      if (!m) return;
      const s = this._host.byName(to);
      if (!s || s.exit) {
        const since = this.#orphanSince.get(to) ?? Date.now();
        this.#orphanSince.set(to, since);
        const left = since + this.settings.graceMs - Date.now();
        if (left > 0) {
          // Woken by a pane created or renamed (the listener kicks), or re-checked at the deadline.
          setTimeout(() => this.#kick(), left + 10);
          return;
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
      if (TRACE) {
        this._host.log(`trace ${m.msg.id}: event->ready ${(performance.now() - lastEventAt).toFixed(1)} ms`);
      }
      await this.#deliver(m, s);
    }
  }

  /** Marks a message in progress, types it, and waits for the turn's end. */
  async #deliver(m: Located, s: Surface): Promise<void> {
    const id = m.msg.id;
    this.#active.add(id);
    try {
      const t0 = performance.now();
      const from = Math.max(0, (await this._host.total(s)) - 1);
      const t1 = performance.now();
      const claimed = await updateMessage(
        m.file,
        id,
        (cur) =>
          cur.status === "pending"
            ? { status: "in_progress", metadata: { delivered_at: now(), surface_id: s.id } }
            : null,
      );
      const t2 = performance.now();
      await this.#load(m.file);
      const t3 = performance.now();
      if (!claimed) return; // changed or removed by someone else meanwhile
      this.#current.set(s.name ?? m.msg.to, id);
      this.#scheduleStatus();
      let typed;
      try {
        typed = await this._host.type(s, m.msg.content.replace(/\n+$/, ""));
        if (TRACE) {
          const t4 = performance.now();
          this._host.log(
            `trace ${id}: total ${(t1 - t0).toFixed(1)} claim ${(t2 - t1).toFixed(1)} load ${
              (t3 - t2).toFixed(1)
            } ` +
              `type ${(t4 - t3).toFixed(1)} ms`,
          );
        }
      } catch (e) {
        await this.#finish(m, "failed", { reason: `typing failed: ${(e as Error).message}` });
        return;
      }
      if (typed.status === "stalled") {
        await this.#finish(m, "failed", { reason: `the agent did not take the message: ${typed.evidence}` });
        return;
      }
      await this.#awaitTurn(m, s, from, typed.agent !== null);
    } finally {
      this.#active.delete(id);
      this.#current.delete(s.name ?? m.msg.to);
      this.#scheduleStatus();
    }
  }

  /** Waits until the recipient's turn ends and records how. */
  async #awaitTurn(m: Located, s: Surface, from: number, agent: boolean): Promise<void> {
    const deadline = Date.now() + this.settings.timeoutMs;
    const content = m.msg.content.replace(/\n+$/, "");
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
    await updateMessage(
      m.file,
      m.msg.id,
      (cur) =>
        cur.status === "completed" || cur.status === "failed"
          ? null
          : { status, metadata: { ...meta, finished_at: now() } },
    );
    if (status === "failed") this._host.log(`queue: ${m.msg.id} to ${m.msg.to} failed: ${meta.reason}`);
    await this.#load(m.file);
  }

  /** A message found in progress at start: received (its turn is awaited) or interrupted. */
  async #recover(m: Located): Promise<void> {
    this.#active.add(m.msg.id);
    try {
      const deadline = Date.now() + this.settings.graceMs;
      let s = this._host.byName(m.msg.to);
      while ((!s || s.exit) && Date.now() < deadline && !this.#stopped) {
        await sleep(100);
        s = this._host.byName(m.msg.to);
      }
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

  #scheduleStatus() {
    if (this.#statusTimer || this.#stopped) return;
    this.#statusTimer = setTimeout(() => {
      this.#statusTimer = null;
      this.#writeStatuses().catch((e) => this._host.log(`queue: status files: ${(e as Error).message}`));
    }, 100);
  }

  /** The status of one agent from its pane's real state and the queue's record. */
  async statusOf(name: string): Promise<AgentStatus> {
    const all = this.#all();
    const to = all.filter((m) => m.msg.to === name);
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
        tasks_completed: to.filter((m) => m.msg.status === "completed").length,
        tasks_failed: to.filter((m) => m.msg.status === "failed").length,
        messages_sent: all.filter((m) => m.msg.from === name).length,
        messages_received: to.filter((m) => m.msg.status !== "pending").length,
        uptime_seconds: s ? Math.round((Date.now() - s.createdAt) / 1000) : 0,
      },
    };
  }

  /** Rewrites the status files whose content changed (not counting last_updated). */
  async #writeStatuses() {
    const names = new Set<string>();
    for (const m of this.#all()) {
      names.add(m.msg.from);
      names.add(m.msg.to);
    }
    for (const name of names) {
      const st = await this.statusOf(name);
      const key = JSON.stringify({
        ...st,
        last_updated: null,
        statistics: { ...st.statistics, uptime_seconds: 0 },
      });
      if (this.#statusWritten.get(name) === key) continue;
      this.#statusWritten.set(name, key);
      await atomicWrite(statusFile(this.root, name), statusYaml(st));
    }
  }

  /** Message counts by status, for `queue.info`. */
  counts(): Record<Message["status"], number> {
    const c = { pending: 0, in_progress: 0, completed: 0, failed: 0 };
    for (const m of this.#all()) c[m.msg.status]++;
    return c;
  }
}
