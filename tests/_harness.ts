/**
 * Process-level test harness: a real host on a temp socket, the real CLI,
 * raw socket access, and `waitUntil` instead of sleeps.
 *
 * @module
 */

import type { Result, ResultMethod } from "../src/spec/results.ts";
import { Client } from "../src/client/client.ts";

/** The repo root. */
export const ROOT = new URL("../", import.meta.url).pathname;
const MAIN = `${ROOT}main.ts`;
const CONFIG = `${ROOT}deno.json`;

/** What a CLI run gave. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options for {@link startHost}. */
export interface HostOptions {
  /** Config file contents (JSONC), written to a temp file. */
  config?: string;
  /** Extra environment for the host. */
  env?: Record<string, string>;
  /** Set PANEFLOW_IPC_SCRIPTING=1 (default true). */
  scripting?: boolean;
  /** The host's directory (socket and config inside), kept by {@link TestHost.stop}; default a new temp dir, removed. */
  dir?: string;
  /** Run the host with only the environment given here (no inherited variables). */
  clearEnv?: boolean;
  /** The host's working directory (default this process's). */
  cwd?: string;
  /** More `deno run` flags for the host (bench/: the V8 flags a detached host runs with, `--inspect`). */
  denoFlags?: string[];
  /** How long the host may take to answer its first ping (default 15 s). */
  readyTimeoutMs?: number;
  /** On stop, SIGKILL a host still running this long after SIGTERM (default: wait for it). */
  killAfterMs?: number;
}

/** A running host for one test. */
export interface TestHost {
  dir: string;
  /** The host's process id. */
  pid: number;
  socket: string;
  env: Record<string, string>;
  /** Runs `paneflow <args>` against this host. */
  cli(
    args: string[],
    opts?: { stdin?: string | Uint8Array; env?: Record<string, string> },
  ): Promise<RunResult>;
  /** Runs a CLI verb and parses its stdout as JSON; fails on a non-zero exit. */
  json<T = Record<string, unknown>>(args: string[]): Promise<T>;
  /** Sends one JSON-RPC request on a fresh connection and returns the response object. */
  rpc(method: string, params?: unknown): Promise<Record<string, unknown>>;
  /** Calls a method and returns its result; throws on an error response. */
  call<M extends ResultMethod>(method: M, params?: unknown): Promise<Result<M>>;
  /** The host's stderr so far. */
  log(): string;
  /** Stops the host (SIGTERM) and removes the temp dir. */
  stop(): Promise<void>;
}

/** Waits until `predicate` returns a truthy value; the error names what and the last value seen. */
export async function waitUntil<T>(
  description: string,
  predicate: () => T | false | null | undefined | Promise<T | false | null | undefined>,
  { timeoutMs = 10_000, intervalMs = 20 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (true) {
    try {
      last = await predicate();
      if (last) return last as T;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${description}; last seen: ${seen}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Runs a command to its end (stdin closed unless `opts` says otherwise) and decodes what it printed. */
export async function runCommand(
  cmd: string,
  args: string[],
  opts: Omit<Deno.CommandOptions, "args" | "stdout" | "stderr"> = {},
): Promise<RunResult> {
  const out = await new Deno.Command(cmd, { stdin: "null", ...opts, args, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Runs the CLI with `env` (no host implied). */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  stdin?: string | Uint8Array,
  opts: { cwd?: string; clearEnv?: boolean } = {},
): Promise<RunResult> {
  const cmd = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", `--config=${CONFIG}`, MAIN, ...args],
    env,
    ...opts,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  });
  const child = cmd.spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(typeof stdin === "string" ? new TextEncoder().encode(stdin) : stdin);
    await w.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Sends raw bytes on a new connection and returns everything read until close or `untilLines` lines. */
export async function rawExchange(
  socket: string,
  data: Uint8Array | string,
  { untilLines = 1, timeoutMs = 5000 } = {},
): Promise<string[]> {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
  const dec = new TextDecoder();
  let text = "";
  const buf = new Uint8Array(65536);
  const timer = setTimeout(() => conn.close(), timeoutMs);
  try {
    while (text.split("\n").length - 1 < untilLines) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += dec.decode(buf.subarray(0, n), { stream: true });
    }
  } catch {
    /* closed by the timer */
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed */ }
  }
  return text.split("\n").filter((l) => l.length);
}

/** A `paneflow serve` process whose output is collected. */
export interface Served {
  child: Deno.ChildProcess;
  /** The host's stdout and stderr so far. */
  log(): string;
  /** Resolves with the exit code once the host has exited and its output is drained. */
  exited: Promise<number>;
}

/**
 * Starts `paneflow serve` with `env` (and only it with `clearEnv`); does not
 * wait for it to answer. `denoFlags` go to `deno run`.
 */
export function spawnServe(
  env: Record<string, string>,
  opts: { clearEnv?: boolean; denoFlags?: string[]; cwd?: string } = {},
): Served {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", `--config=${CONFIG}`, ...(opts.denoFlags ?? []), MAIN, "serve"],
    env,
    clearEnv: opts.clearEnv ?? false,
    ...(opts.cwd === undefined ? {} : { cwd: opts.cwd }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const dec = new TextDecoder();
  const drain = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) text += dec.decode(chunk, { stream: true });
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const exited = child.status.then(async (s) => {
    await drained;
    return s.code;
  });
  return { child, log: () => text, exited };
}

/** Whether a path exists (without following a final symlink). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Starts a real host (`paneflow serve`) on a temp socket and waits until it answers. */
export async function startHost(opts: HostOptions = {}): Promise<TestHost> {
  const dir = opts.dir ?? await Deno.makeTempDir({ prefix: "pf-" });
  const socket = `${dir}/s.sock`;
  const configPath = `${dir}/config.jsonc`;
  await Deno.writeTextFile(configPath, opts.config ?? "{}");
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? dir,
    SHELL: "/bin/sh",
    PANEFLOW_SOCKET_PATH: socket,
    PANEFLOW_CONFIG: configPath,
    // The restore journal (docs/restore.md) stays in the test's dir, not in the user's state dir.
    XDG_STATE_HOME: `${dir}/state`,
    ...(opts.scripting === false ? {} : { PANEFLOW_IPC_SCRIPTING: "1" }),
    ...opts.env,
  };
  const served = spawnServe(env, opts);
  let exited = false;
  served.exited.then(() => (exited = true));

  const rpc = async (method: string, params: unknown = {}) => {
    const lines = await rawExchange(
      socket,
      JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) + "\n",
    );
    if (!lines.length) throw new Error(`No answer to ${method}`);
    return JSON.parse(lines[0]);
  };
  const host: TestHost = {
    dir,
    pid: served.child.pid,
    socket,
    env,
    cli: (args, o = {}) => runCli(args, { ...env, ...o.env }, o.stdin),
    async json(args) {
      const r = await runCli(args, env);
      if (r.code !== 0) throw new Error(`paneflow ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
      return JSON.parse(r.stdout);
    },
    rpc,
    async call<M extends ResultMethod>(method: M, params?: unknown): Promise<Result<M>> {
      // The product's client (replies matched by id), on a connection of its own.
      const client = await Client.connect(socket);
      try {
        const res = await client.request(method, params);
        if (res.error) throw new Error(`${method}: ${JSON.stringify(res.error)}`);
        return res.result as Result<M>;
      } finally {
        client.close();
      }
    },
    log: served.log,
    async stop() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      if (!exited) {
        try {
          served.child.kill("SIGTERM");
        } catch { /* gone */ }
        if (opts.killAfterMs !== undefined) {
          timer = setTimeout(() => {
            try {
              served.child.kill("SIGKILL");
            } catch { /* gone */ }
          }, opts.killAfterMs);
        }
      }
      await served.exited;
      clearTimeout(timer);
      if (opts.dir === undefined) await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
  try {
    await waitUntil("the host to answer system.ping", async () => {
      if (exited) throw new Error(`host exited: ${served.log()}`);
      return (await rpc("system.ping")).result;
    }, { timeoutMs: opts.readyTimeoutMs ?? 15_000 });
  } catch (e) {
    await host.stop();
    throw e;
  }
  return host;
}

/**
 * Runs `fn` with a fresh host; prints the host's log only when it fails.
 */
export async function withHost(
  opts: HostOptions,
  fn: (host: TestHost) => Promise<void>,
): Promise<void> {
  const host = await startHost(opts);
  try {
    await fn(host);
  } catch (e) {
    console.error(`--- host log ---\n${host.log()}--- end host log ---`);
    throw e;
  } finally {
    await host.stop();
  }
}

/** Reads a pane's raw text through the CLI. */
export async function readPane(host: TestHost, target: string, lines = 200): Promise<string> {
  const r = await host.cli(["read", target, "--raw", "--lines", String(lines)]);
  if (r.code !== 0) throw new Error(`read ${target} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}
