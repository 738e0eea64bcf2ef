/**
 * A ptywright-protocol test client: `paneflow serve --stdio` (NDJSON or LSP
 * framing) or a unix socket; requests matched by id, notifications kept.
 *
 * @module
 */
import { ROOT } from "./_harness.ts";

/** A JSON-RPC message as read. */
export type Msg = {
  jsonrpc?: string;
  id?: unknown;
  method?: string;
  params?: Record<string, unknown>;
  // deno-lint-ignore no-explicit-any
  result?: any;
  error?: { code: number; message: string; data?: unknown };
};

/** One protocol connection. */
export class PwClient {
  messages: Msg[] = [];
  /** When each message's last byte arrived (wall-clock ms), parallel to {@link messages}. */
  arrivals: number[] = [];
  /** Bytes read and not yet parsed: `#buf[#start, #end)` (grown by doubling, so a big answer is copied O(1) times). */
  #buf = new Uint8Array(64 * 1024);
  #start = 0;
  #end = 0;
  /** Pending bytes known to hold no message end. */
  #scanned = 0;
  #waiters: (() => void)[] = [];
  #nextId = 1000;
  #reader: Promise<void>;
  #at = 0;

  constructor(
    private readonly _write: (b: Uint8Array) => Promise<void>,
    source: ReadableStream<Uint8Array> | Deno.Conn,
    readonly framing: "ndjson" | "lsp" = "ndjson",
    private readonly _closeWrite: () => Promise<void> = async () => {},
  ) {
    const take = (chunk: Uint8Array) => {
      this.#at = performance.timeOrigin + performance.now();
      this.#append(chunk);
      this.#parse();
      for (const w of this.#waiters.splice(0)) w();
    };
    this.#reader = (async () => {
      if (source instanceof ReadableStream) {
        for await (const chunk of source) take(chunk);
        return;
      }
      // A socket is read directly, up to 1 MiB at a time: a snapshot answer is ~380 KB, and
      // `conn.readable` (64 KiB reads, each through the stream's promises) added ~0.4 ms to every
      // answer in bench/session_wait.ts: the client's cost, not the host's.
      const buf = new Uint8Array(1 << 20);
      for (let n; (n = await source.read(buf)) !== null;) take(buf.subarray(0, n));
    })().catch(() => {});
  }

  #append(chunk: Uint8Array) {
    if (this.#end + chunk.length > this.#buf.length) {
      const pending = this.#end - this.#start;
      let size = this.#buf.length;
      while (size < pending + chunk.length) size *= 2;
      if (size === this.#buf.length) this.#buf.copyWithin(0, this.#start, this.#end);
      else {
        const next = new Uint8Array(size);
        next.set(this.#buf.subarray(this.#start, this.#end));
        this.#buf = next;
      }
      this.#end = pending;
      this.#start = 0;
    }
    this.#buf.set(chunk, this.#end);
    this.#end += chunk.length;
  }

  #parse() {
    while (this.#end > this.#start) {
      const raw = this.#buf.subarray(this.#start, this.#end);
      let body: Uint8Array;
      let used: number;
      if (this.framing === "ndjson") {
        const nl = raw.indexOf(10, this.#scanned);
        if (nl < 0) {
          this.#scanned = raw.length;
          return;
        }
        body = raw.subarray(0, nl);
        used = nl + 1;
      } else {
        const head = new TextDecoder().decode(raw.subarray(0, 64));
        const m = /^Content-Length: (\d+)\r\n\r\n/.exec(head);
        if (!m) return;
        const start = m[0].length;
        if (raw.length < start + Number(m[1])) return;
        body = raw.subarray(start, start + Number(m[1]));
        used = start + Number(m[1]);
      }
      this.#start += used;
      this.#scanned = 0;
      this.messages.push(JSON.parse(new TextDecoder().decode(body)));
      this.arrivals.push(this.#at);
    }
    this.#start = this.#end = 0;
  }

  /** Writes raw text (framed by the caller). */
  raw(text: string): Promise<void> {
    return this._write(new TextEncoder().encode(text));
  }

  /** Writes one message in this client's framing. */
  send(msg: unknown): Promise<void> {
    const body = JSON.stringify(msg);
    if (this.framing === "ndjson") return this.raw(body + "\n");
    return this.raw(`Content-Length: ${new TextEncoder().encode(body).length}\r\n\r\n${body}`);
  }

  /** Waits for a message matching `pred` (already read or to come). */
  async next(pred: (m: Msg) => boolean, timeoutMs = 20_000, from = 0): Promise<Msg> {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const found = this.messages.slice(from).find(pred);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `no matching message within ${timeoutMs} ms; got ${JSON.stringify(this.messages).slice(-2000)}`,
        );
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        new Promise<void>((r) => this.#waiters.push(r)),
        new Promise<void>((r) => (timer = setTimeout(r, Math.min(left, 200)))),
      ]);
      clearTimeout(timer);
    }
  }

  /** Sends a request and resolves with its response message. */
  async request(method: string, params?: unknown, timeoutMs = 30_000): Promise<Msg> {
    const id = this.#nextId++;
    await this.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    return await this.next((m) => m.id === id, timeoutMs);
  }

  /** A request that must succeed: its result. */
  // deno-lint-ignore no-explicit-any
  async call(method: string, params?: unknown, timeoutMs?: number): Promise<any> {
    const m = await this.request(method, params, timeoutMs);
    if (m.error) throw new Error(`${method} failed: ${m.error.code} ${m.error.message}`);
    return m.result;
  }

  /** Drops the messages read so far (a bench's answers would otherwise all stay in memory). */
  forget(): void {
    this.messages = [];
    this.arrivals = [];
  }

  /** Closes the write side. */
  async end(): Promise<void> {
    await this._closeWrite();
  }

  /** Resolves when the peer has closed its side. */
  done(): Promise<void> {
    return this.#reader;
  }
}

/** A `paneflow serve --stdio` child with a client on its stdio. */
export interface StdioServer {
  client: PwClient;
  child: Deno.ChildProcess;
  dir: string;
  /** Ends stdin; resolves with the exit code and stderr. */
  stop(): Promise<{ code: number; stderr: string }>;
}

/** The environment a test host gets (a private config and temp dir). */
export function hostEnv(dir: string): Record<string, string> {
  return { PANEFLOW_CONFIG: `${dir}/config.jsonc`, TMPDIR: dir, PANEFLOW_IPC_SCRIPTING: "" };
}

/** Starts `paneflow serve <args>` with piped stdio. */
export function spawnPaneflow(args: string[], dir: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", `--config=${ROOT}deno.json`, `${ROOT}main.ts`, ...args],
    env: hostEnv(dir),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Starts `paneflow serve --stdio [--framing f]`. */
export async function startStdio(framing: "ndjson" | "lsp" = "ndjson"): Promise<StdioServer> {
  const dir = await Deno.makeTempDir({ prefix: "pw-stdio-" });
  const child = spawnPaneflow(["serve", "--stdio", "--framing", framing], dir);
  const writer = child.stdin.getWriter();
  let stderr = "";
  const errDone = (async () => {
    for await (const c of child.stderr) stderr += new TextDecoder().decode(c);
  })();
  const client = new PwClient(
    (b) => writer.write(b),
    child.stdout,
    framing,
    async () => {
      try {
        await writer.close();
      } catch { /* closed */ }
    },
  );
  return {
    client,
    child,
    dir,
    async stop() {
      await client.end();
      const { code } = await child.status;
      await errDone;
      await client.done();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      return { code, stderr };
    },
  };
}

/** Connects a client to a unix socket. */
export async function connectSocket(path: string): Promise<{ client: PwClient; conn: Deno.UnixConn }> {
  const conn = await Deno.connect({ transport: "unix", path });
  const client = new PwClient(
    async (b) => {
      let off = 0;
      while (off < b.length) off += await conn.write(b.subarray(off));
    },
    conn,
    "ndjson",
    async () => {
      try {
        await conn.closeWrite();
      } catch { /* closed */ }
    },
  );
  return { client, conn };
}

/** The fixture directory. */
export const FIXTURES = `${ROOT}tests/fixtures/session`;
