/**
 * The web server's link to the host: requests on one connection (answered in
 * order, so calls are queued one at a time) and an event stream on another.
 * The only module of src/web/ that knows the client; switching to the
 * id-matching client in src/client/ is a change to this file alone.
 *
 * @module
 */
import { Client } from "../client.ts";

/** A request connection to the host. */
export class HostLink {
  #client: Client;
  #chain: Promise<unknown> = Promise.resolve();
  #closed = false;

  private constructor(client: Client) {
    this.#client = client;
  }

  /** Connects, or returns null when no host answers on `path`. */
  static async open(path: string): Promise<HostLink | null> {
    const client = await Client.tryConnect(path);
    return client ? new HostLink(client) : null;
  }

  /** Calls a method; calls run one after another on the connection. */
  call<T = Record<string, unknown>>(method: string, params: unknown = {}): Promise<T> {
    const run = this.#chain.then(() => {
      if (this.#closed) throw new Error("The host connection is closed");
      return this.#client.call<T>(method, params);
    });
    this.#chain = run.catch(() => {});
    return run;
  }

  /** Closes the connection. */
  close(): void {
    this.#closed = true;
    this.#client.close();
  }
}

/** An `events.subscribe` stream. */
export class HostEvents {
  #client: Client;

  private constructor(client: Client) {
    this.#client = client;
  }

  /** Subscribes to `types`; null when no host answers or it refuses. */
  static async open(path: string, types: string[]): Promise<HostEvents | null> {
    const client = await Client.tryConnect(path);
    if (!client) return null;
    try {
      await client.send("events.subscribe", { types });
      const ack = await client.readLine();
      if (ack === null || JSON.parse(ack).type !== "subscribed") throw new Error("not subscribed");
    } catch {
      client.close();
      return null;
    }
    return new HostEvents(client);
  }

  /** The next event, or null when the host went away. */
  async next(): Promise<Record<string, unknown> | null> {
    const line = await this.#client.readLine();
    if (line === null) return null;
    try {
      return JSON.parse(line);
    } catch {
      return { type: "unparsable" };
    }
  }

  /** Ends the stream. */
  close(): void {
    this.#client.close();
  }
}
