/**
 * The web server's link to the host: requests on one connection (queued one
 * at a time, so a reconnect after the host's idle deadline retries cleanly)
 * and an event stream on another. The only module of src/web/ that knows the
 * client (src/client/).
 *
 * @module
 */
import { Client } from "../client/client.ts";
import { RpcError } from "../errors.ts";
import type { Result, ResultMethod } from "../spec/results.ts";

/**
 * A request connection to the host. The host closes a connection that has
 * been silent for its idle deadline (30 s): a call that finds it closed is
 * sent again once on a new connection.
 */
export class HostLink {
  #client: Client | null;
  #chain: Promise<unknown> = Promise.resolve();
  #closed = false;

  private constructor(client: Client, readonly path: string) {
    this.#client = client;
  }

  /** Connects, or returns null when no host answers on `path`. */
  static async open(path: string): Promise<HostLink | null> {
    const client = await Client.tryConnect(path);
    return client ? new HostLink(client, path) : null;
  }

  /** Calls a method; calls run one after another on the connection. */
  call<M extends ResultMethod>(method: M, params: unknown = {}): Promise<Result<M>> {
    const run = this.#chain.then(() => this.#call(method, params, true));
    this.#chain = run.catch(() => {});
    return run;
  }

  async #call<M extends ResultMethod>(method: M, params: unknown, retry: boolean): Promise<Result<M>> {
    if (this.#closed) throw new Error("The host connection is closed");
    this.#client ??= await Client.connect(this.path);
    try {
      return await this.#client.call(method, params);
    } catch (e) {
      if (e instanceof RpcError || !retry) throw e;
      // The connection is gone (idle deadline, or the host restarting): once more on a new one.
      this.#client.close();
      this.#client = null;
      return this.#call(method, params, false);
    }
  }

  /** Closes the connection. */
  close(): void {
    this.#closed = true;
    this.#client?.close();
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
      await client.subscribe({ types });
    } catch {
      client.close();
      return null;
    }
    return new HostEvents(client);
  }

  /** The next event, or null when the host went away. */
  async next(): Promise<Record<string, unknown> | null> {
    const msg = await this.#client.next();
    return msg === null ? null : msg.value;
  }

  /** Ends the stream. */
  close(): void {
    this.#client.close();
  }
}

/**
 * Answers a pane's dialog for the page (`surface.answer`, guarded by the dialog id the page
 * showed); the refusal to show the page, or null.
 */
export async function answerFromPage(
  link: HostLink | null,
  keystrokes: boolean,
  msg: { id: number; answer: "approve" | "deny"; dialog_id: string },
): Promise<string | null> {
  if (!keystrokes) {
    return "Answer refused: the host's keystroke gate is closed (start it with PANEFLOW_IPC_SCRIPTING=1)";
  }
  if (!link) return "Answer refused: the host is not reachable";
  try {
    const r = await link.call("surface.answer", {
      surface_id: msg.id,
      answer: msg.answer,
      dialog_id: msg.dialog_id,
    });
    return r.closed ? null : `Answered pane ${msg.id}, but its dialog is still up`;
  } catch (e) {
    return `Answer refused: ${(e as Error).message}`;
  }
}

/** One call on a connection of its own (reply links: each is one request). */
export async function callOnce<M extends ResultMethod>(
  path: string,
  method: M,
  params: unknown,
): Promise<Result<M>> {
  const link = await HostLink.open(path);
  if (!link) throw new Error("The paneflow host is not running");
  try {
    return await link.call(method, params);
  } finally {
    link.close();
  }
}
