/**
 * The thin client: one connection to a host over any {@link Duplex} (the
 * unix socket today, an SSH relay later), NDJSON framing from `wire/`,
 * replies matched to requests by id (several calls may be in flight), and
 * everything that is not a reply — event frames after `subscribe()`,
 * server-initiated notifications — kept apart in a queue read with
 * `next()`. Imports only Deno built-ins and our own light modules.
 *
 * @module
 */
import { CliFailure, RpcError, UsageError } from "../errors.ts";
import { ExitCode, MAX_LINE_BYTES, PROTOCOL_VERSION } from "../spec/codes.ts";
import { socketPath } from "../paths.ts";
import type { Duplex } from "../wire/duplex.ts";
// Types only: erased at run time, so the CLI still loads no zod.
import type { Result, ResultMethod } from "../spec/results.ts";
import { encodeLine, ndjson } from "../wire/framing.ts";
import { connectUnix } from "./unix.ts";
import { deadline, later, sleep } from "./timer.ts";

const decoder = new TextDecoder();

/** How to start a host, for "instance unreachable" messages. */
export const START_HINT = "start one with: paneflow serve --detach";

/**
 * Where verbs connect: `$PANEFLOW_HOST` (set by the global `--host`), a remote
 * host reached over ssh, else the local socket.
 */
export function clientAddress(env: { get(k: string): string | undefined } = Deno.env): string {
  return env.get("PANEFLOW_HOST") || socketPath(env);
}

/** Whether an address names a remote host: socket paths are always absolute. */
export function isRemote(address: string): boolean {
  return !address.startsWith("/");
}

/** The reply deadline when `PANEFLOW_TIMEOUT` is unset, in seconds. */
export const DEFAULT_TIMEOUT_SECS = 5;

/**
 * Methods that legitimately take longer than a quick reply (a submit waits
 * for the agent's evidence, `up` spawns panes): they get
 * {@link SLOW_FACTOR} times the deadline, after a ping has shown that the
 * host answers at all.
 */
const SLOW_METHODS = new Set([
  "surface.send_text",
  "workspace.up",
  "workspace.create",
  "surface.split",
  "system.shutdown",
]);
const SLOW_FACTOR = 24;

/**
 * The reply (and connect) deadline in ms: `$PANEFLOW_TIMEOUT` seconds, else
 * {@link DEFAULT_TIMEOUT_SECS}. A value that is not a positive number is a
 * usage error.
 */
export function replyDeadlineMs(env: { get(k: string): string | undefined } = Deno.env): number {
  const raw = env.get("PANEFLOW_TIMEOUT");
  if (raw === undefined || raw === "") return DEFAULT_TIMEOUT_SECS * 1000;
  const secs = Number(raw);
  if (!Number.isFinite(secs) || secs <= 0) {
    throw new UsageError(`PANEFLOW_TIMEOUT must be a positive number of seconds, not "${raw}"`);
  }
  return secs * 1000;
}

/** Per-call options. */
export interface CallOptions {
  /** The reply deadline in ms; 0 for none (a call meant to block). Default: the client's. */
  timeoutMs?: number;
}

/** A JSON-RPC error object. */
type WireError = { code: number; message: string; data?: { reason?: string } };

/** A message that is not a reply: its text as the host wrote it, and its value. */
export interface Inbound {
  text: string;
  value: Record<string, unknown>;
}

interface Pending {
  method: string;
  cancelTimer?: () => void;
  resolve: (res: Record<string, unknown>) => void;
  reject: (e: Error) => void;
}

/** A connection to the host. */
export class Client {
  #conn: Duplex;
  #framing;
  #id = 0;
  #pending = new Map<number, Pending>();
  #inbox: Inbound[] = [];
  #readers: ((m: Inbound | null) => void)[] = [];
  #pumping = false;
  #ended = false;
  /** A connection-level error the host sent (id null), such as "too many connections". */
  #refused: WireError | null = null;
  /** Whether the host has said anything on this connection yet, and when it last did. */
  #heard = false;
  #heardAt = 0;
  /** The tail of the write queue. */
  #writing: Promise<void> = Promise.resolve();
  /** Whether this client has said who it is (`system.hello`, sent with its first request). */
  #introduced = false;
  /**
   * The reply deadline of each call, in ms (0: none); from `PANEFLOW_TIMEOUT`.
   * A client meant to block (an event stream's reader) sets 0.
   */
  timeoutMs: number;

  /** A client over `conn`; `path` names the host in messages. */
  constructor(conn: Duplex, readonly path: string, opts: { timeoutMs?: number } = {}) {
    this.#conn = conn;
    this.#framing = ndjson(conn);
    this.timeoutMs = opts.timeoutMs ?? replyDeadlineMs();
  }

  /**
   * Connects to the host at `path`: a socket path (absolute), or a remote host
   * (`--host`: a config name or ssh:// URL, reached over ssh). Exit 1 with how to
   * start one when none answers.
   */
  static async connect(path: string = clientAddress(), opts: { start?: boolean } = {}): Promise<Client> {
    if (isRemote(path)) {
      const { remoteDuplex } = await import("./ssh.ts");
      const duplex = await remoteDuplex(path, opts);
      return await Client.#checked(new Client(duplex, `host "${duplex.target.label}"`));
    }
    const timeoutMs = replyDeadlineMs();
    let conn: Duplex;
    try {
      conn = await withDeadline(connectUnix(path), timeoutMs, (c) => c.close());
    } catch (e) {
      if (e instanceof DeadlinePassed) {
        throw new CliFailure(
          `Instance unreachable: connecting to ${path} took over ${secs(timeoutMs)}${TIMEOUT_HINT}`,
          undefined,
          { cause: e },
        );
      }
      throw new CliFailure(
        `Instance unreachable: no paneflow host answers on ${path}; ${START_HINT}`,
        undefined,
        { cause: e },
      );
    }
    return new Client(conn, path, { timeoutMs });
  }

  /**
   * A remote host's client, its protocol version checked: a host too old or
   * too new is one clear error, not garbage.
   */
  static async #checked(client: Client): Promise<Client> {
    try {
      const id = await client.call("system.identify");
      if (id.protocol !== PROTOCOL_VERSION) {
        throw new CliFailure(
          `The ${client.path} speaks protocol ${id.protocol ?? "?"} (paneflow ${id.version ?? "?"}); ` +
            `this paneflow speaks ${PROTOCOL_VERSION}: install the same version on both machines`,
        );
      }
      return client;
    } catch (e) {
      client.close();
      const why = (client.#conn as { failure?: string | null }).failure;
      if (why) throw new CliFailure(why, undefined, { cause: e });
      throw e;
    }
  }

  /** Connects, or returns null when no host answers. */
  static async tryConnect(path: string = clientAddress()): Promise<Client | null> {
    try {
      return await Client.connect(path);
    } catch {
      return null;
    }
  }

  /** Why the connection ended: the transport's own reason (ssh) when it has one. */
  lost(what: string): CliFailure {
    const why = (this.#conn as { failure?: string | null }).failure;
    return why ? new CliFailure(why) : new CliFailure(`The host went away ${what}`);
  }

  #gone(): CliFailure {
    // A transport that knows why it ended (ssh: host key, auth, a dropped link) says so.
    const why = (this.#conn as { failure?: string | null }).failure;
    if (why) return new CliFailure(why);
    return new CliFailure(`Instance unreachable: the host on ${this.path} closed the connection`);
  }

  /** Reads messages until the connection ends: replies to their callers, the rest to the inbox. */
  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (true) {
        const frame = await this.#framing.next();
        if (frame === null || !(frame instanceof Uint8Array)) break;
        this.#heard = true;
        this.#heardAt = Date.now();
        const text = decoder.decode(frame);
        if (!text.trim()) continue;
        let value: Record<string, unknown>;
        try {
          value = JSON.parse(text);
        } catch {
          break; // not our protocol: the connection is out of step
        }
        if (value === null || typeof value !== "object") continue;
        const id = value.id;
        const reply = "result" in value || "error" in value || value.type === "subscribed";
        if (reply && typeof id === "number" && this.#pending.has(id)) {
          const p = this.#pending.get(id)!;
          this.#pending.delete(id);
          p.cancelTimer?.();
          p.resolve(value);
          continue;
        }
        // The late reply to a call that passed its deadline: nobody waits for it.
        if (reply && typeof id === "number" && id > 0 && id <= this.#id) continue;
        if (reply && id === null && value.error) {
          // Said to the connection as a whole, then it closes.
          this.#refused = value.error as WireError;
          continue;
        }
        const msg = { text, value };
        const reader = this.#readers.shift();
        if (reader) reader(msg);
        else this.#inbox.push(msg);
      }
    } finally {
      this.#ended = true;
      const err = () => this.#refused ? toRpcError(this.#refused) : this.#gone();
      for (const p of this.#pending.values()) {
        p.cancelTimer?.();
        p.reject(err());
      }
      this.#pending.clear();
      for (const r of this.#readers.splice(0)) r(null);
    }
  }

  /** Sends a request; returns its id. The reply is matched by id and awaited with {@link request}. */
  async send(method: string, params: unknown = {}, opts: CallOptions = {}): Promise<number> {
    return (await this.#start(method, params, opts)).id;
  }

  /** The deadline of one call: the client's, many times it for a slow method. */
  #deadlineOf(method: string, opts: CallOptions): number {
    if (opts.timeoutMs !== undefined) return opts.timeoutMs;
    if (!this.timeoutMs) return 0;
    return SLOW_METHODS.has(method) ? this.timeoutMs * SLOW_FACTOR : this.timeoutMs;
  }

  async #start(
    method: string,
    params: unknown,
    opts: CallOptions = {},
  ): Promise<{ id: number; reply: Promise<Record<string, unknown>> }> {
    const ms = this.#deadlineOf(method, opts);
    // A long deadline is only for a host known to answer: a listener that
    // never does is found out within the short one.
    if (!this.#heard && this.timeoutMs && (ms === 0 || ms > this.timeoutMs) && method !== "system.ping") {
      await this.request("system.ping", {}, { timeoutMs: this.timeoutMs });
    }
    const id = ++this.#id;
    let data = encodeLine({ jsonrpc: "2.0", id, method, params });
    // The host would refuse it and close the connection mid-write: say why here instead.
    if (data.length > MAX_LINE_BYTES + 1) {
      throw new UsageError(
        `The ${method} request is ${data.length} bytes; the host takes at most ${MAX_LINE_BYTES} per message`,
      );
    }
    if (this.#ended) throw this.#refused ? toRpcError(this.#refused) : this.#gone();
    if (!this.#introduced) {
      // A notification (no reply, no round trip): the host lists us in system.clients.
      this.#introduced = true;
      const hello = encodeLine({ jsonrpc: "2.0", method: "system.hello", params: selfDescription() });
      const both = new Uint8Array(hello.length + data.length);
      both.set(hello);
      both.set(data, hello.length);
      data = both;
    }
    const reply = new Promise<Record<string, unknown>>((resolve, reject) => {
      const pending: Pending = { method, resolve, reject };
      if (ms > 0) {
        // The deadline counts the host's silence: a host busy answering earlier
        // (pipelined) requests on this connection is making progress.
        const sentAt = Date.now();
        const check = () => {
          if (this.#pending.get(id) !== pending) return;
          const left = Math.max(sentAt, this.#heardAt) + ms - Date.now();
          if (left > 0) {
            pending.cancelTimer = deadline(left, check);
            return;
          }
          this.#pending.delete(id);
          const name = method.length > 60 ? `${method.slice(0, 60)}...` : method;
          reject(
            new CliFailure(
              `No reply from the host on ${this.path} to ${name} within ${secs(ms)}${TIMEOUT_HINT}`,
            ),
          );
        };
        pending.cancelTimer = deadline(ms, check);
      }
      this.#pending.set(id, pending);
    });
    reply.catch(() => {}); // awaited by the caller; a send failure below must not leave it unhandled
    void this.#pump();
    // One message at a time: a partial write must not interleave with another call's bytes.
    const write = this.#writing.then(async () => {
      let off = 0;
      while (off < data.length) off += await this.#conn.write(data.subarray(off));
    });
    this.#writing = write.catch(() => {});
    try {
      await write;
    } catch {
      // A host that refused the connection (-32000, too many connections) said why before closing.
      await this.#settled();
      this.#pending.get(id)?.cancelTimer?.();
      this.#pending.delete(id);
      if (this.#refused) throw toRpcError(this.#refused);
      throw this.#gone();
    }
    return { id, reply };
  }

  /** Waits (briefly) for the pump to read what the host said before closing. */
  async #settled(): Promise<void> {
    const deadline = Date.now() + 1000;
    while (!this.#ended && !this.#refused && Date.now() < deadline) {
      await sleep(5);
    }
  }

  /** Sends a request and returns the whole response object (result or error). */
  async request(
    method: string,
    params: unknown = {},
    opts: CallOptions = {},
  ): Promise<Record<string, unknown>> {
    const { reply } = await this.#start(method, params, opts);
    return await reply;
  }

  /**
   * Calls a method and returns its result, typed by the method's result
   * schema (src/spec/results.ts); throws {@link RpcError}, or CliFailure past
   * the deadline.
   */
  async call<M extends ResultMethod>(
    method: M,
    params: unknown = {},
    opts: CallOptions = {},
  ): Promise<Result<M>> {
    return await this.callAny(method, params, opts) as Result<M>;
  }

  /**
   * {@link call} for a method named only at run time (`paneflow api`, a
   * proxy): the result is not typed.
   */
  async callAny(method: string, params: unknown = {}, opts: CallOptions = {}): Promise<unknown> {
    const res = await this.request(method, params, opts);
    if (res.error) throw toRpcError(res.error as WireError);
    const result = res.result as Record<string, unknown> | undefined;
    if (result && typeof result === "object" && "error" in result && Object.keys(result).length === 1) {
      // Paneflow's scripting reference says some legacy validation errors still come back as a
      // `{"error": ...}` result, and a client treats it as a failure:
      // https://github.com/ArthurDEV44/paneflow/blob/main/docs/user/scripting.md
      throw new CliFailure(String(result.error), ExitCode.Failure);
    }
    return result;
  }

  /**
   * Turns this connection into an event stream (`events.subscribe`): resolves
   * with the ack's text once the host has subscribed; read the events with
   * {@link next} / {@link nextWithin}. Throws RpcError on bad params.
   */
  async subscribe(params: { surfaces?: number[]; types?: string[] } = {}): Promise<Inbound> {
    const res = await this.request("events.subscribe", params);
    if (res.error) throw toRpcError(res.error as WireError);
    return { text: JSON.stringify(res), value: res };
  }

  /** The next message that is not a reply (an event, a notification), or null when the host is gone. */
  next(): Promise<Inbound | null> {
    const queued = this.#inbox.shift();
    if (queued) return Promise.resolve(queued);
    if (this.#ended) return Promise.resolve(null);
    void this.#pump();
    return new Promise((resolve) => this.#readers.push(resolve));
  }

  /** Like {@link next}, but undefined after `ms` (the message is not lost: a later call gets it). */
  nextWithin(ms: number): Promise<Inbound | null | undefined> {
    const queued = this.#inbox.shift();
    if (queued) return Promise.resolve(queued);
    if (this.#ended) return Promise.resolve(null);
    void this.#pump();
    return new Promise((resolve) => {
      const reader = (m: Inbound | null) => {
        cancel();
        resolve(m);
      };
      const cancel = later(ms, () => {
        const i = this.#readers.indexOf(reader);
        if (i >= 0) this.#readers.splice(i, 1);
        resolve(undefined);
      });
      this.#readers.push(reader);
    });
  }

  /** Closes the connection (pending calls fail with "closed the connection"). */
  close(): void {
    try {
      this.#conn.close();
    } catch { /* already closed */ }
  }
}

/** What `system.hello` says: this program, its pid and its verb. */
function selfDescription(): { name: string; pid: number; verb?: string } {
  const verb = Deno.args.find((a) => !a.startsWith("-"));
  return { name: "paneflow", pid: Deno.pid, ...(verb && verb.length <= 100 ? { verb } : {}) };
}

const TIMEOUT_HINT = "; is it a paneflow host? (PANEFLOW_TIMEOUT=<secs> sets the deadline)";

function secs(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

class DeadlinePassed extends Error {}

/** `p`, or DeadlinePassed after `ms` (a value arriving later is handed to `late`). */
function withDeadline<T>(p: Promise<T>, ms: number, late: (v: T) => void): Promise<T> {
  let cancel = () => {};
  let passed = false;
  p.then((v) => passed && late(v), () => {});
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      cancel = deadline(ms, () => {
        passed = true;
        reject(new DeadlinePassed());
      });
    }),
  ]).finally(() => cancel());
}

function toRpcError(e: WireError): RpcError {
  return new RpcError(e.code, e.message, e.data);
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
