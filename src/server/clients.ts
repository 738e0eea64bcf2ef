/**
 * The host's table of client connections: who holds the slots (for the
 * "too many connections" message, `system.clients` and `paneflow clients`),
 * and the budgets — calls and event streams are counted apart, so watchers
 * and MCP bridges cannot lock the CLI out.
 *
 * A connection's peer is told by what the client said in `system.hello`
 * (name, pid, verb): Deno exposes no SO_PEERCRED on unix sockets.
 *
 * @module
 */
import { MAX_CONNECTIONS } from "../spec/codes.ts";
import { type Connection, stateKey } from "../core/connection.ts";

/** Event streams the host serves at once, apart from the calls' {@link MAX_CONNECTIONS}. */
export const MAX_STREAMS = 64;

/** What a client said about itself. */
export interface Hello {
  name?: string;
  pid?: number;
  verb?: string;
}

/** A connection's self-description, set by `system.hello`. */
export const HELLO = stateKey<Hello>("hello", () => ({}));

/** One row of `system.clients`. */
export interface ClientInfo {
  id: number;
  kind: string;
  name: string | null;
  pid: number | null;
  verb: string | null;
  age_ms: number;
  stream: boolean;
}

/** The connections a host serves. */
export class ClientTable {
  #conns = new Set<Connection>();

  /** Tracks `conn` until it closes. */
  add(conn: Connection): void {
    this.#conns.add(conn);
    conn.onClose(() => void this.#conns.delete(conn));
  }

  /** Connections answering calls (not event streams). */
  calls(): number {
    let n = 0;
    for (const c of this.#conns) if (!c.stream) n++;
    return n;
  }

  /** Connections turned into event streams. */
  streams(): number {
    return this.#conns.size - this.calls();
  }

  /** Whether one more call connection fits. */
  admitsCall(): boolean {
    return this.calls() < MAX_CONNECTIONS;
  }

  /** Whether one more event stream fits. */
  admitsStream(): boolean {
    return this.streams() < MAX_STREAMS;
  }

  /** Every connection, oldest first. */
  list(now = Date.now()): ClientInfo[] {
    return [...this.#conns].map((c) => {
      const hello = c.state(HELLO);
      return {
        id: c.id,
        kind: c.kind,
        name: hello.name ?? null,
        pid: hello.pid ?? null,
        verb: hello.verb ?? null,
        age_ms: now - c.openedAt,
        stream: c.stream,
      };
    });
  }

  /** The holders of call slots, in one short phrase for an error message. */
  holders(max = 6): string {
    const rows = this.list().filter((c) => !c.stream);
    const parts = rows.slice(0, max).map(describe);
    if (rows.length > max) parts.push(`${rows.length - max} more`);
    return parts.join(", ");
  }
}

/** `pid 123 paneflow wait, 41 s` or `an unnamed client, 2 s`. */
export function describe(c: ClientInfo): string {
  const who = [c.pid === null ? "" : `pid ${c.pid}`, c.name ?? "", c.verb ?? ""].filter(Boolean).join(" ");
  return `${who || "an unnamed client"} (${Math.round(c.age_ms / 1000)} s)`;
}
