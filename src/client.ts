/**
 * The thin client: one socket connection, requests answered in order, and
 * event streams. Imports only Deno built-ins and our own light modules.
 *
 * @module
 */
import { CliFailure, RpcError } from "./errors.ts";
import { ExitCode } from "./spec/codes.ts";
import { socketPath } from "./paths.ts";

const encoder = new TextEncoder();

/** How to start a host, for "instance unreachable" messages. */
export const START_HINT = "start one with: paneflow serve --detach";

/** A connection to the host. */
export class Client {
  #conn: Deno.UnixConn;
  #buf = "";
  #decoder = new TextDecoder();
  #chunk = new Uint8Array(64 * 1024);
  #id = 0;

  private constructor(conn: Deno.UnixConn, readonly path: string) {
    this.#conn = conn;
  }

  /** Connects to the host; exit 1 with how to start one when none answers. */
  static async connect(path: string = socketPath()): Promise<Client> {
    try {
      return new Client(await Deno.connect({ transport: "unix", path }), path);
    } catch {
      throw new CliFailure(`Instance unreachable: no paneflow host answers on ${path}; ${START_HINT}`);
    }
  }

  /** Connects, or returns null when no host answers. */
  static async tryConnect(path: string = socketPath()): Promise<Client | null> {
    try {
      return await Client.connect(path);
    } catch {
      return null;
    }
  }

  /** The next line from the host, or null when it closed the connection. */
  async readLine(): Promise<string | null> {
    while (true) {
      const nl = this.#buf.indexOf("\n");
      if (nl >= 0) {
        const line = this.#buf.slice(0, nl);
        this.#buf = this.#buf.slice(nl + 1);
        return line;
      }
      let n: number | null;
      try {
        n = await this.#conn.read(this.#chunk);
      } catch {
        n = null;
      }
      if (n === null) return null;
      this.#buf += this.#decoder.decode(this.#chunk.subarray(0, n), { stream: true });
    }
  }

  /** Sends a request line. */
  async send(method: string, params: unknown = {}): Promise<number> {
    const id = ++this.#id;
    const data = encoder.encode(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    let off = 0;
    try {
      while (off < data.length) off += await this.#conn.write(data.subarray(off));
    } catch {
      throw new CliFailure(`Instance unreachable: the host on ${this.path} closed the connection`);
    }
    return id;
  }

  /** Calls a method and returns its result; throws {@link RpcError}. */
  async call<T = Record<string, unknown>>(method: string, params: unknown = {}): Promise<T> {
    await this.send(method, params);
    const line = await this.readLine();
    if (line === null) {
      throw new CliFailure(`Instance unreachable: the host on ${this.path} closed the connection`);
    }
    const res = JSON.parse(line);
    if (res.error) throw new RpcError(res.error.code, res.error.message, res.error.data);
    if (
      res.result && typeof res.result === "object" && "error" in res.result &&
      Object.keys(res.result).length === 1
    ) {
      // Legacy `{"error": ...}` result shape: treat as a failure (seed 000).
      throw new CliFailure(String(res.result.error), ExitCode.Failure);
    }
    return res.result as T;
  }

  /** Closes the connection. */
  close(): void {
    try {
      this.#conn.close();
    } catch { /* already closed */ }
  }
}

/** Runs `fn` with a connected client, closing it afterwards. */
export async function withClient<T>(fn: (c: Client) => Promise<T>, path?: string): Promise<T> {
  const client = await Client.connect(path);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}
