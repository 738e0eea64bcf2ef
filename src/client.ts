/**
 * The thin client: one socket connection, requests answered in order, event
 * streams, and selector resolution (SPEC §3), in one place: a number is an
 * exact surface_id; `cmdline:<substr>` matches the foreground argv;
 * `cwd:<path>` the pane's working directory; anything else is an exact pane
 * name. Selectors search all workspaces. Imports only Deno built-ins and our
 * own light modules.
 *
 * @module
 */
import { CliFailure, RpcError, UsageError } from "./errors.ts";
import { ExitCode, MAX_LINE_BYTES } from "./spec/codes.ts";
import { socketPath } from "./paths.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** How to start a host, for "instance unreachable" messages. */
export const START_HINT = "start one with: paneflow serve --detach";

/** A connection to the host. */
export class Client {
  #conn: Deno.UnixConn;
  /** Bytes received and not yet returned as lines: `#buf[#start..#end]`. */
  #buf = new Uint8Array(64 * 1024);
  #start = 0;
  #end = 0;
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
    let scanned = 0; // bytes after #start known to hold no newline
    while (true) {
      const nl = this.#buf.subarray(this.#start + scanned, this.#end).indexOf(10);
      if (nl >= 0) {
        // A whole line is whole UTF-8: it is decoded at once, without a streaming decoder.
        const end = this.#start + scanned + nl;
        const line = decoder.decode(this.#buf.subarray(this.#start, end));
        this.#start = end + 1;
        return line;
      }
      scanned = this.#end - this.#start;
      if (this.#end === this.#buf.length) this.#makeRoom();
      let n: number | null;
      try {
        n = await this.#conn.read(this.#buf.subarray(this.#end));
      } catch {
        n = null;
      }
      if (n === null) return null;
      this.#end += n;
    }
  }

  /** Moves the unread bytes to the front, in a buffer twice as big when they fill half of it. */
  #makeRoom(): void {
    const pending = this.#end - this.#start;
    if (pending * 2 > this.#buf.length) {
      const bigger = new Uint8Array(this.#buf.length * 2);
      bigger.set(this.#buf.subarray(this.#start, this.#end));
      this.#buf = bigger;
    } else {
      this.#buf.copyWithin(0, this.#start, this.#end);
    }
    this.#start = 0;
    this.#end = pending;
  }

  /** Sends a request line. */
  async send(method: string, params: unknown = {}): Promise<number> {
    const id = ++this.#id;
    const data = encoder.encode(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    // The host would refuse it and close the connection mid-write: say why here instead.
    if (data.length > MAX_LINE_BYTES + 1) {
      throw new UsageError(
        `The ${method} request is ${data.length} bytes; the host takes at most ${MAX_LINE_BYTES} per message`,
      );
    }
    let off = 0;
    try {
      while (off < data.length) off += await this.#conn.write(data.subarray(off));
    } catch {
      // A host that refused the connection (-32000, too many connections) said why before closing.
      const said = await this.readLine().catch(() => null);
      let error: { code: number; message: string; data?: { reason?: string } } | undefined;
      try {
        error = said === null ? undefined : JSON.parse(said).error;
      } catch { /* not an answer */ }
      if (error) throw new RpcError(error.code, error.message, error.data);
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

/** The pane fields selectors look at (a `surface.list` item). */
export interface PaneInfo {
  surface_id: number;
  name: string | null;
  cmd: string;
  cwd: string;
  workspace: number;
  title?: string;
  [k: string]: unknown;
}

function normalizeDir(path: string): string {
  let p = path;
  if (p.startsWith("~/") || p === "~") p = (Deno.env.get("HOME") ?? "") + p.slice(1);
  if (!p.startsWith("/")) p = `${Deno.cwd()}/${p}`;
  try {
    p = Deno.realPathSync(p);
  } catch { /* keep as given */ }
  return p.length > 1 ? p.replace(/\/+$/, "") : p;
}

/** Panes matching a selector; pure given the pane list. */
export function matchPanes(selector: string, panes: PaneInfo[]): PaneInfo[] {
  if (selector === "") throw new UsageError("Empty selector");
  if (/^\d+$/.test(selector)) return panes.filter((p) => p.surface_id === Number(selector));
  if (selector.startsWith("cmdline:")) {
    const needle = selector.slice("cmdline:".length);
    if (!needle) throw new UsageError(`Selector "cmdline:" needs a substring`);
    return panes.filter((p) => p.cmd.includes(needle));
  }
  if (selector.startsWith("cwd:")) {
    const dir = selector.slice("cwd:".length);
    if (!dir) throw new UsageError(`Selector "cwd:" needs a path`);
    const want = normalizeDir(dir);
    return panes.filter((p) => p.cwd === want);
  }
  return panes.filter((p) => p.name === selector);
}

function describe(p: PaneInfo): string {
  return `${p.surface_id}${p.name ? ` (${p.name})` : ""}`;
}

/** Exactly one pane for a selector; exit 3 for none or several. */
export function pickOne(selector: string, panes: PaneInfo[]): PaneInfo {
  const found = matchPanes(selector, panes);
  if (found.length === 0) {
    throw new CliFailure(`No pane matches "${selector}"`, ExitCode.NotFound);
  }
  if (found.length > 1) {
    throw new CliFailure(
      `Selector "${selector}" matches ${found.length} panes: ${found.map(describe).join(", ")}`,
      ExitCode.NotFound,
    );
  }
  return found[0];
}

/** Lists every pane of the host. */
export async function listPanes(client: Client): Promise<PaneInfo[]> {
  const { surfaces } = await client.call<{ surfaces: PaneInfo[] }>("surface.list");
  return surfaces;
}

/**
 * Resolves a selector to one surface_id. A number is passed through without
 * a round trip: the host answers "not found" (exit 3) itself. Ids start at 1.
 */
export async function resolveOne(client: Client, selector: string): Promise<number> {
  if (/^\d+$/.test(selector)) {
    const id = Number(selector);
    if (id >= 1 && Number.isSafeInteger(id)) return id;
    throw new CliFailure(`No pane with surface_id ${selector}`, ExitCode.NotFound);
  }
  return pickOne(selector, await listPanes(client)).surface_id;
}

/** Resolves a selector that may match several panes; none is exit 3. */
export async function resolveMany(client: Client, selector: string): Promise<PaneInfo[]> {
  const found = matchPanes(selector, await listPanes(client));
  if (found.length === 0) throw new CliFailure(`No pane matches "${selector}"`, ExitCode.NotFound);
  return found;
}
