/**
 * One connection's ptywright notifications (`server.set_notifications`):
 * off by default; a filter of sessions and adapters (empty: every session);
 * per session the last sequence sent, the transcript cursor and whether the
 * exit was sent. After each request of the family it polls (as ptywright
 * does; what it sends is held until that response is written); between
 * requests a session's change also triggers a poll, so notifications arrive
 * as they happen, never ahead of the response of the request being handled.
 *
 * @module
 */
import type { Connection } from "../core/connection.ts";
import { redact } from "./redact.ts";
import type { Sessions, SessionState } from "./mod.ts";

interface Seen {
  sequence: number | null;
  cursor: number;
  exited: boolean;
}

/** The resolved filter, echoed by `server.set_notifications`. */
export interface NotifyFilter {
  enabled: boolean;
  sessions?: string[];
  adapters?: string[];
}

/** Notification state of one connection. */
export class Notifications {
  enabled = false;
  #sessions: string[] = [];
  #adapters: string[] = [];
  #seen = new Map<string, Seen>();
  #off: (() => void) | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #retry: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly _registry: Sessions, private readonly _conn: Connection) {
    _conn.onClose(() => {
      this.#off?.();
      if (this.#retry) clearTimeout(this.#retry);
    });
  }

  /** Applies `server.set_notifications`; off → on puts every output cursor at the current end. */
  set(p: { enabled: boolean; sessions?: string[]; adapters?: string[] }): NotifyFilter {
    const wasOn = this.enabled;
    this.enabled = p.enabled;
    this.#sessions = p.sessions ?? [];
    this.#adapters = p.adapters ?? [];
    if (p.enabled && !wasOn) {
      this.#seen.clear();
      for (const s of this._registry.all()) {
        this.#seen.set(s.id, { sequence: null, cursor: s.chars, exited: false });
      }
      this.#off = this._registry.watchOutput(() => this.#kick());
    } else if (!p.enabled) {
      this.#off?.();
      this.#off = null;
    }
    return {
      enabled: this.enabled,
      ...(this.#adapters.length ? { adapters: this.#adapters } : {}),
      ...(this.#sessions.length ? { sessions: this.#sessions } : {}),
    };
  }

  /**
   * A session moved. While a request of this connection runs, the poll waits
   * (its output would only be held; the family polls after each request) and
   * retries shortly in case the request is not of the family (a long
   * `session.wait` keeps it waiting, as in ptywright).
   */
  #kick() {
    if (!this.enabled || this._conn.closed) return;
    if (this._conn.busy) {
      this.#retry ??= setTimeout(() => {
        this.#retry = null;
        this.#kick();
      }, 10);
      return;
    }
    void this.flush().catch(() => {});
  }

  /** Sends what is new; polls never overlap (a change during one runs another). */
  flush(): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      try {
        do {
          this.#again = false;
          await this.#poll();
        } while (this.#again && this.enabled && !this._conn.closed);
      } finally {
        this.#running = null;
      }
    })();
    return this.#running;
  }

  #wanted(s: SessionState): boolean {
    if (!this.#sessions.length && !this.#adapters.length) return true;
    return this.#sessions.includes(s.id) || (s.adapter !== null && this.#adapters.includes(s.adapter));
  }

  async #poll() {
    const live = this._registry.all();
    const ids = new Set(live.map((s) => s.id));
    for (const id of this.#seen.keys()) if (!ids.has(id)) this.#seen.delete(id);
    const list = live.filter((s) => this.#wanted(s)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const s of list) {
      if (this._conn.closed || !this.enabled) return;
      let seen = this.#seen.get(s.id);
      if (!seen) this.#seen.set(s.id, seen = { sequence: null, cursor: 0, exited: false });
      if (seen.sequence !== s.sequence) {
        seen.sequence = s.sequence;
        this.#send("session.changed", { session: s.id, sequence: s.sequence });
      }
      if (s.chars > seen.cursor) {
        const delta = await this._registry.output(s.id, seen.cursor).catch(() => null);
        if (delta) {
          seen.cursor = delta.chars;
          if (delta.text) {
            this.#send("session.output", {
              session: s.id,
              sequence: delta.sequence,
              output: redact(delta.text),
              ...(delta.dropped ? { dropped: true } : {}),
            });
          }
        }
      }
      if (s.exited && !seen.exited) {
        seen.exited = true;
        this.#send("session.exited", { session: s.id, sequence: s.sequence });
      }
    }
  }

  #send(method: string, params: unknown) {
    // Held until the reply of a request this connection is running has been written.
    this._conn.notify(method, params);
  }
}
