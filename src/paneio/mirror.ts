/**
 * What the host knows of the queue's files: each file's messages as the
 * queue worker last sent them (./queue_files.ts views, applied in place when
 * only messages changed or were appended), and the numbers per agent name
 * kept as views come, so that finding the next message, the recipients with
 * pending messages and the status files' statistics never walk every
 * message.
 *
 * @module
 */
import type { FileView } from "./queue_files.ts";
import type { Located, Message } from "./store.ts";

/** Per agent name, the queue's numbers (kept as views come, not counted per question). */
export interface Counts {
  /** Messages naming it (as sender or recipient): at 0 the name is dropped. */
  refs: number;
  pendingTo: number;
  completed: number;
  failed: number;
  sent: number;
  received: number;
}

/** What the host knows of one queue file (the worker's last view of it). */
interface FileMirror {
  list: Located[];
  pos: Map<string, number>;
  /** Its pending messages. */
  pending: number;
  /** No message before this index is pending (where the search for the next one starts). */
  head: number;
}

/** What this host wrote for a message it claimed or finished (by file and id). */
export interface Wrote {
  status: Message["status"];
  metadata: Record<string, unknown>;
  /** False: the change could not be written yet (the file had a problem). */
  written: boolean;
}

/** The host's mirror of the queue's files. */
export class QueueMirror {
  readonly files = new Map<string, FileMirror>();
  /** The parts of a big file's view that came before its last part. */
  #stash = new Map<string, Located[]>();
  #counts = new Map<string, Counts>();
  #byStatus: Record<Message["status"], number> = { pending: 0, in_progress: 0, completed: 0, failed: 0 };
  /**
   * What this host wrote for each message it claimed (file and id): a file written over with
   * an older copy (an editor's stale save) shows an earlier status; the message is not delivered
   * again, and the status is written back. Forgotten when the message leaves its file.
   */
  readonly wrote = new Map<string, Wrote>();

  /** Adds (`sign` 1) or removes (-1) one message's part in the counts. */
  #count(m: Located, sign: 1 | -1) {
    const get = (name: string) => {
      let c = this.#counts.get(name);
      if (!c) {
        c = { refs: 0, pendingTo: 0, completed: 0, failed: 0, sent: 0, received: 0 };
        this.#counts.set(name, c);
      }
      return c;
    };
    const from = get(m.msg.from);
    from.refs += sign;
    from.sent += sign;
    const to = get(m.msg.to);
    to.refs += sign;
    if (m.msg.status === "pending") to.pendingTo += sign;
    else to.received += sign;
    if (m.msg.status === "completed") to.completed += sign;
    if (m.msg.status === "failed") to.failed += sign;
    this.#byStatus[m.msg.status] += sign;
    if (from.refs === 0) this.#counts.delete(m.msg.from);
    if (to.refs === 0) this.#counts.delete(m.msg.to);
  }

  /** Forgets a file (gone). */
  drop(file: string) {
    const old = this.files.get(file);
    this.#stash.delete(file);
    if (!old) return;
    this.files.delete(file);
    for (const m of old.list) {
      this.#count(m, -1);
      this.wrote.delete(`${file}\0${m.msg.id}`);
    }
  }

  /**
   * Takes the worker's view of a file: in place when messages changed or
   * were appended, else rebuilt. Gives the messages that changed once the
   * view is whole (null for a part that more parts follow).
   */
  apply(part: FileView): Located[] | null {
    if (part.more) {
      const stash = this.#stash.get(part.file) ?? [];
      for (const m of part.changed) stash.push(m);
      this.#stash.set(part.file, stash);
      return null;
    }
    const stash = this.#stash.get(part.file);
    this.#stash.delete(part.file);
    const v = stash ? { ...part, changed: [...stash, ...part.changed] } : part;
    const old = this.files.get(v.file);
    if (old && v.ids === null) {
      const changed = new Map(v.changed.map((m) => [m.msg.id, m]));
      for (const id of v.append ?? []) {
        const m = changed.get(id);
        if (!m) continue;
        changed.delete(id);
        old.pos.set(id, old.list.length);
        old.list.push(m);
        this.#count(m, 1);
        if (m.msg.status === "pending") old.pending++;
      }
      for (const m of changed.values()) {
        const i = old.pos.get(m.msg.id);
        if (i === undefined) continue;
        const was = old.list[i];
        this.#count(was, -1);
        if (was.msg.status === "pending") old.pending--;
        old.list[i] = m;
        this.#count(m, 1);
        if (m.msg.status === "pending") {
          old.pending++;
          if (i < old.head) old.head = i;
        }
      }
    } else {
      const changed = new Map(v.changed.map((m) => [m.msg.id, m]));
      const f: FileMirror = { list: [], pos: new Map(), pending: 0, head: 0 };
      for (const id of v.ids ?? []) {
        const m = changed.get(id) ?? (old ? old.list[old.pos.get(id) ?? -1] : undefined);
        if (!m) continue;
        f.pos.set(id, f.list.length);
        f.list.push(m);
        if (m.msg.status === "pending") f.pending++;
      }
      if (old) {
        for (const m of old.list) {
          this.#count(m, -1);
          // Gone from the file (pruned, deleted by hand) unless only held back by a problem.
          if (!v.problem && !f.pos.has(m.msg.id)) this.wrote.delete(`${v.file}\0${m.msg.id}`);
        }
      }
      for (const m of f.list) this.#count(m, 1);
      this.files.set(v.file, f);
    }
    return v.changed;
  }

  /** Every message. */
  all(): Located[] {
    return [...this.files.values()].flatMap((f) => f.list);
  }

  /** Recipients with pending messages (from the counts: no walk over every message). */
  recipients(): string[] {
    const out: string[] = [];
    for (const [name, c] of this.#counts) if (c.pendingTo) out.push(name);
    return out;
  }

  /**
   * The next message to `to` that `deliverable` accepts: file order within
   * a sender, oldest head first across senders.
   */
  next(to: string, deliverable: (m: Located) => boolean): Located | null {
    let best: Located | null = null;
    for (const f of this.files.values()) {
      // A file is one channel: all its messages go to one recipient.
      if (!f.pending || f.list[0]?.msg.to !== to) continue;
      while (f.head < f.list.length && f.list[f.head].msg.status !== "pending") f.head++;
      let head: Located | undefined;
      for (let i = f.head; i < f.list.length; i++) {
        if (f.list[i].msg.to === to && deliverable(f.list[i])) {
          head = f.list[i];
          break;
        }
      }
      if (
        head &&
        (!best || head.msg.timestamp.localeCompare(best.msg.timestamp) < 0 ||
          (head.msg.timestamp === best.msg.timestamp && head.file < best.file))
      ) best = head;
    }
    return best;
  }

  /** One agent name's numbers, or null when no message names it. */
  countsOf(name: string): Counts | null {
    return this.#counts.get(name) ?? null;
  }

  /** Every agent name a message names. */
  names(): string[] {
    return [...this.#counts.keys()];
  }

  /** Message counts by status. */
  byStatus(): Record<Message["status"], number> {
    return { ...this.#byStatus };
  }
}
