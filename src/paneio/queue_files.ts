/**
 * The queue's files, kept off the host's event loop by the queue worker
 * (./queue_worker.ts): it watches `queue/`, reads and parses only the files
 * that changed (and in them only the documents that changed: the chunk
 * cache of ./store.ts), tells the host what each file holds now (sending
 * only the messages that are new or changed), makes the host's status
 * changes (under the file's lock, fsynced, before the reply) and writes the
 * status files. The host's event loop never parses YAML, reads a queue file
 * or waits for an fsync.
 *
 * Loads and the host's own updates of one file run one at a time (files
 * side by side), so a load never reads a file while the host itself
 * replaces it; a file another writer replaces
 * (renames over) or rewrites in place while it is read is read again (and
 * logged once per version), never half used.
 *
 * @module
 */
import {
  type AgentStatus,
  atomicWrite,
  currentVersion,
  ensureRoot,
  type Located,
  type Message,
  queueFiles,
  readQueue,
  type ReadResult,
  sameVersion,
  statusFile,
  statusYaml,
  updateMessage,
  type Version,
} from "./store.ts";

/** What a queue file holds now: its messages' ids in file order, and those new or changed. */
export interface FileView {
  t: "file";
  file: string;
  /** The ids in file order; null: the same as in the last view of this file (plus `append`). */
  ids: string[] | null;
  /** With `ids` null: ids added at the end of the file. */
  append?: string[];
  /** More of the same view follows (only `changed` is set): a big file crosses in parts. */
  more?: boolean;
  /** The file has a problem: its messages are held back until it is fixed (not gone). */
  problem?: boolean;
  changed: Located[];
  /** When the watcher reported the change that led to this (performance.timeOrigin-based ms), or 0. */
  eventAt: number;
}

/** A change of one message the host asks for. */
export interface UpdateRequest {
  file: string;
  id: string;
  /** Made only while the message's status is one of these. */
  from: Message["status"][];
  status: Message["status"];
  metadata: Record<string, unknown>;
}

/** Worker to host. */
export type FromWorker =
  | FileView
  | { t: "gone"; file: string }
  | { t: "log"; line: string }
  | { t: "started"; error: string | null }
  | { t: "reply"; seq: number; msg: Message | null; error: string | null };

/** Host to worker. */
export type ToWorker =
  | { t: "start"; root: string }
  | ({ t: "update"; seq: number } & UpdateRequest)
  | { t: "status"; name: string; status: AgentStatus }
  | { t: "rescan" }
  | { t: "stop" };

/** Options (tests). */
export interface FilesOptions {
  /** Runs between a queue file's open and its read. */
  midRead?: (file: string) => Promise<void>;
  /** Watch `queue/` (default); without, files are read only when {@link QueueFiles.touched} says so. */
  watch?: boolean;
}

interface FileState {
  version: Version;
  byId: Map<string, Located>;
  ids: string[];
  logged: string | null;
}

/** A file as just read: its state, the messages new or changed, and whether it has a problem. */
interface LoadedFile {
  state: FileState;
  changed: Located[];
  problem: boolean;
}

/** At most this many messages (or about this many bytes of content) cross in one part of a view. */
const VIEW_MESSAGES = 200;
const VIEW_BYTES = 512 * 1024;

const wallNow = () => performance.timeOrigin + performance.now();
const isQueueName = (p: string) => {
  const name = p.slice(p.lastIndexOf("/") + 1);
  return name.endsWith(".yaml") && !name.startsWith(".");
};

/** The queue files of one root, as one worker keeps them. */
export class QueueFiles {
  #files = new Map<string, FileState>();
  #watcher: Deno.FsWatcher | null = null;
  /** Per file, the chain of its loads and updates: one at a time per file, files side by side. */
  #lanes = new Map<string, Promise<void>>();
  /** Files with a load queued that has not started, with when the watcher said so. */
  #loadQueued = new Map<string, number>();
  /** Loads, updates and scans queued or running. */
  #busy = 0;
  #idle: (() => void)[] = [];
  #stopped = false;
  #statusWritten = new Map<string, string>();
  #statusChain: Promise<void> = Promise.resolve();
  /** Reads that found the file replaced or rewritten while they read it (tests). */
  replacedReads = 0;

  constructor(
    readonly root: string,
    private readonly _emit: (m: FromWorker) => void,
    private readonly _opts: FilesOptions = {},
  ) {}

  /** Watches `queue/`, then reads every file (so that nothing written between the two is missed). */
  async start(): Promise<void> {
    await ensureRoot(this.root);
    if (this._opts.watch !== false) this.#watch();
    this.rescan();
    await this.whenIdle();
  }

  stop(): void {
    this.#stopped = true;
    try {
      this.#watcher?.close();
    } catch { /* closed */ }
  }

  /** Resolves when nothing is left to read or write. */
  whenIdle(): Promise<void> {
    if (!this.#busy) return Promise.resolve();
    return new Promise((r) => this.#idle.push(r));
  }

  /** Reads every file again (the watcher overflowed, or the host asks). */
  rescan(): void {
    if (this.#stopped) return;
    this.#busy++;
    this.#scanDir().catch((e) =>
      this._emit({ t: "log", line: `queue: cannot list ${this.root}/queue: ${(e as Error).message}` })
    ).finally(() => this.#done());
  }

  /** Marks files changed (what the watcher does; tests call it too). */
  touched(paths: string[], at = wallNow()): void {
    for (const p of paths) if (isQueueName(p)) this.#queueLoad(p, at);
  }

  /**
   * Changes one message under its file's lock (fsynced); the reply comes as
   * soon as that is done (a claim is on the way to typing), the file's new
   * view right after it. Returns the message as the file now holds it, or
   * null when it was left.
   */
  update(req: UpdateRequest): Promise<Message | null> {
    return new Promise((resolve, reject) => {
      this.#onFile(req.file, async () => {
        try {
          const msg = await updateMessage(
            req.file,
            req.id,
            (cur) => req.from.includes(cur.status) ? { status: req.status, metadata: req.metadata } : null,
          );
          // What was written is what the next read is compared with: a save over it meanwhile
          // (an older copy) then shows as a change, even when it equals what was read before.
          const st = this.#files.get(req.file);
          const was = st?.byId.get(req.id);
          if (st && was && msg) {
            st.byId.set(req.id, { ...was, msg });
            st.version = { ino: null, size: -1, mtime: 0 };
          }
          resolve(msg);
        } catch (e) {
          reject(e);
        }
        // Before anything else is read (the change's own watch event then finds it read).
        await this.#load(req.file, 0);
      });
    });
  }

  /** Writes an agent's status file when it changed (not counting last_updated and uptime). */
  writeStatus(name: string, st: AgentStatus): Promise<void> {
    const key = JSON.stringify({
      ...st,
      last_updated: null,
      statistics: { ...st.statistics, uptime_seconds: 0 },
    });
    if (this.#statusWritten.get(name) === key) return this.#statusChain;
    this.#statusWritten.set(name, key);
    this.#statusChain = this.#statusChain.then(() => atomicWrite(statusFile(this.root, name), statusYaml(st)))
      .then(() => {}, (e) => {
        this.#statusWritten.delete(name);
        this._emit({ t: "log", line: `queue: status file of ${name}: ${(e as Error).message}` });
      });
    return this.#statusChain;
  }

  #watch() {
    try {
      this.#watcher = Deno.watchFs(`${this.root}/queue`, { recursive: false });
    } catch (e) {
      this._emit({ t: "log", line: `queue: cannot watch ${this.root}/queue: ${(e as Error).message}` });
      return;
    }
    (async () => {
      try {
        for await (const ev of this.#watcher!) {
          if (this.#stopped) break;
          if (ev.flag === "rescan") this.rescan();
          else this.touched(ev.paths);
        }
      } catch (e) {
        if (!this.#stopped) this._emit({ t: "log", line: `queue: watcher failed: ${(e as Error).message}` });
      }
    })();
  }

  #done() {
    if (--this.#busy === 0) { for (const r of this.#idle.splice(0)) r(); }
  }

  /** Runs `fn` after what is queued for `file`. */
  #onFile(file: string, fn: () => Promise<void>): void {
    this.#busy++;
    const next: Promise<void> = (this.#lanes.get(file) ?? Promise.resolve()).then(fn).catch((e) =>
      this._emit({ t: "log", line: `queue: ${file}: ${(e as Error).message}` })
    ).finally(() => {
      if (this.#lanes.get(file) === next) this.#lanes.delete(file);
      this.#done();
    });
    this.#lanes.set(file, next);
  }

  /** Reads `file` again (once, however many changes come before the read starts). */
  #queueLoad(file: string, at: number) {
    if (this.#stopped || this.#loadQueued.has(file)) return;
    this.#loadQueued.set(file, at);
    this.#onFile(file, async () => {
      const eventAt = this.#loadQueued.get(file) ?? 0;
      this.#loadQueued.delete(file);
      if (!this.#stopped) await this.#load(file, eventAt);
    });
  }

  async #scanDir() {
    const files = await queueFiles(this.root);
    const seen = new Set(files);
    for (const f of [...this.#files.keys()]) {
      if (!seen.has(f)) {
        this.#files.delete(f);
        this._emit({ t: "gone", file: f });
      }
    }
    // Every file is read again (a version check skips the unchanged).
    for (const f of files) this.#queueLoad(f, 0);
  }

  /** Reads a file that changed, then tells the host what it holds now. */
  async #load(file: string, eventAt: number): Promise<void> {
    const old = this.#files.get(file);
    const read = await this.#read(file, old, eventAt);
    if (!read) return;
    const next = this.#parse(read.r, read.now, old);
    this.#files.set(file, next.state);
    this.#handOff(file, old, next, eventAt);
  }

  /**
   * The version check and the read: null when the file is unchanged, gone (told so) or
   * replaced while it was read (queued to be read again).
   */
  async #read(
    file: string,
    old: FileState | undefined,
    eventAt: number,
  ): Promise<{ r: ReadResult; now: Version } | null> {
    const now = await currentVersion(file);
    if (!now) {
      if (old) {
        this.#files.delete(file);
        this._emit({ t: "gone", file });
      }
      return null;
    }
    if (old && sameVersion(old.version, now)) return null;
    const midRead = this._opts.midRead;
    const r = await readQueue(file, midRead ? { midRead: () => midRead(file) } : {});
    if (r.version === null && !r.problems.length) {
      // Gone between the stat and the open.
      if (old) {
        this.#files.delete(file);
        this._emit({ t: "gone", file });
      }
      return null;
    }
    // Replaced (renamed over) or rewritten in place while it was read: what was read is not
    // the file any more. It is read again (its change event comes too).
    const path = await currentVersion(file);
    if (r.torn || (r.version && !sameVersion(path, r.version))) {
      this.replacedReads++;
      const line = `queue: ${file}:1: the file was replaced while it was read; reading it again`;
      this._emit({ t: "log", line });
      this.#queueLoad(file, eventAt);
      return null;
    }
    return { r, now };
  }

  /** The file's new state (its problem logged once) and the messages new or changed since `old`. */
  #parse(r: ReadResult, now: Version, old: FileState | undefined): LoadedFile {
    const state: FileState = {
      version: r.version ?? now,
      byId: new Map(),
      ids: [],
      logged: null,
    };
    const p = r.problems[0];
    if (p) {
      const line =
        `queue: ${p.file}:${p.line}: ${p.message} (file left untouched; its messages wait until it is fixed)`;
      if (old?.logged !== line) this._emit({ t: "log", line });
      state.logged = line;
    }
    const changed: Located[] = [];
    for (const m of p ? [] : r.messages) {
      state.byId.set(m.msg.id, m);
      state.ids.push(m.msg.id);
      const o = old?.byId.get(m.msg.id);
      // The chunk cache gives the same object for a document whose text did not change.
      if (!o || o.msg !== m.msg || o.index !== m.index || o.sub !== m.sub || o.line !== m.line) {
        changed.push(m);
      }
    }
    return { state, changed, problem: p !== undefined };
  }

  /** Tells the host the file's view: nothing when nothing changed, a big one in parts. */
  #handOff(
    file: string,
    old: FileState | undefined,
    { state, changed, problem }: LoadedFile,
    eventAt: number,
  ): void {
    // The order as it changed: the same, grown at the end (an append), or anything else (all ids).
    const prefix = old !== undefined && old.ids.length <= state.ids.length &&
      old.ids.every((id, i) => state.ids[i] === id);
    const append = prefix && state.ids.length > old!.ids.length ? state.ids.slice(old!.ids.length) : null;
    if (!changed.length && prefix && !append && old) return;
    // A big file's messages cross in parts, so the host never takes them in one long task.
    const parts: Located[][] = [[]];
    let bytes = 0;
    for (const m of changed) {
      const part = parts.at(-1)!;
      if (part.length && (part.length >= VIEW_MESSAGES || bytes >= VIEW_BYTES)) {
        parts.push([]);
        bytes = 0;
      }
      parts.at(-1)!.push(m);
      bytes += m.msg.content.length;
    }
    for (const part of parts.slice(0, -1)) {
      this._emit({ t: "file", file, ids: null, changed: part, eventAt, more: true });
    }
    this._emit({
      t: "file",
      file,
      ids: prefix ? null : state.ids,
      ...(append ? { append } : {}),
      ...(problem ? { problem: true } : {}),
      changed: parts.at(-1)!,
      eventAt,
    });
  }
}
