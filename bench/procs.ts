/**
 * Process plumbing for the benchmarks: a paneflow host and private tmux
 * servers on temp sockets, RSS readings, and cleanup that always runs.
 *
 * @module
 */
import { HOST_V8_FLAGS } from "../src/paths.ts";
import { startHost as startTestHost, waitUntil } from "../tests/_harness.ts";
import { RpcConn } from "../tests/_stream.ts";

/** The repo root. */
export const ROOT = new URL("../", import.meta.url).pathname;
export const MAIN = `${ROOT}main.ts`;

const cleanups: (() => Promise<void> | void)[] = [];

/** Registers something to undo at exit (run in reverse order). */
export function onCleanup(fn: () => Promise<void> | void): void {
  cleanups.push(fn);
}

/** Runs every registered cleanup once. */
export async function cleanupAll(): Promise<void> {
  while (cleanups.length) {
    const fn = cleanups.pop()!;
    try {
      await fn();
    } catch { /* best effort */ }
  }
}

/**
 * A `system.ping` every `intervalMs` from its own thread (./pinger.ts), so the
 * caller's event loop cannot delay it: `take` gives the round trips so far and
 * goes on, `stop` gives the rest and ends it.
 */
export async function pingWorker(
  socket: string,
  intervalMs = 10,
): Promise<{ take(): Promise<number[]>; stop(): Promise<number[]> }> {
  const w = new Worker(new URL("./pinger.ts", import.meta.url).href, { type: "module" });
  onCleanup(() => w.terminate());
  let onMsg: (d: { started?: boolean; samples?: number[] }) => void = () => {};
  w.onmessage = (e) => onMsg(e.data);
  await new Promise<void>((resolve) => {
    onMsg = (d) => d.started && resolve();
    w.postMessage({ socket, intervalMs });
  });
  const ask = (msg: "take" | "stop") =>
    new Promise<number[]>((resolve) => {
      onMsg = (d) => {
        if (!d.samples) return;
        if (msg === "stop") w.terminate();
        resolve(d.samples);
      };
      w.postMessage(msg);
    });
  return { take: () => ask("take"), stop: () => ask("stop") };
}

/** Polls `predicate` until it gives a truthy value (the tests' `waitUntil`, with a bench's defaults). */
export function waitFor<T>(
  what: string,
  predicate: () => T | false | null | undefined | Promise<T | false | null | undefined>,
  { timeoutMs = 60_000, intervalMs = 10 } = {},
): Promise<T> {
  return waitUntil(what, predicate, { timeoutMs, intervalMs });
}

/** VmRSS of a process in bytes (0 when it is gone). */
export function rss(pid: number): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const m = status.match(/^VmRSS:\s+(\d+) kB/m);
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Waits until a process's RSS stops moving (within 0.5% over `quietMs`), returns it. */
export async function settledRss(pid: number, { quietMs = 600, timeoutMs = 6000 } = {}): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let last = rss(pid);
  let since = performance.now();
  while (performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    const now = rss(pid);
    if (Math.abs(now - last) > last * 0.005) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= quietMs) {
      return now;
    }
  }
  return rss(pid);
}

/** A running `paneflow serve`. */
export interface Host {
  pid: number;
  socket: string;
  env: Record<string, string>;
  rpc: RpcConn;
  stop(): Promise<void>;
}

/**
 * Starts `paneflow serve` with `config` on a socket in `dir/name`: the test
 * harness's host (tests/_harness.ts), run with the V8 flags a detached host
 * (and the compiled binary) runs with and only the environment given here.
 */
export async function startHost(dir: string, name: string, config: unknown): Promise<Host> {
  await Deno.mkdir(`${dir}/${name}`, { recursive: true });
  const host = await startTestHost({
    dir: `${dir}/${name}`,
    config: JSON.stringify(config, null, 2),
    env: {
      LANG: "C.UTF-8",
      ...Object.fromEntries(
        ["PANEFLOW_FLOOD_REST_MS", "PANEFLOW_WORKER_NICE"].flatMap((k) =>
          Deno.env.get(k) ? [[k, Deno.env.get(k)!]] : []
        ),
      ),
    },
    clearEnv: true,
    cwd: ROOT,
    denoFlags: [`--v8-flags=${HOST_V8_FLAGS}`],
    readyTimeoutMs: 30_000,
    killAfterMs: 5000,
  }).catch((e) => {
    throw new Error(`host ${name}: ${(e as Error).message}`);
  });
  let rpc: RpcConn;
  try {
    rpc = await RpcConn.open(host.socket);
  } catch (e) {
    await host.stop();
    throw e;
  }
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      rpc.close();
    } catch { /* closed */ }
    await host.stop();
  };
  onCleanup(stop);
  return { pid: host.pid, socket: host.socket, env: host.env, rpc, stop };
}

/** Output of a finished command. */
export interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (killed after `timeoutMs`). */
export async function run(
  cmd: string,
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<Out> {
  const out = await new Deno.Command(cmd, {
    args,
    env: opts.env,
    cwd: opts.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(opts.timeoutMs ?? 120_000),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** A private tmux server (`tmux -L <name> -f <conf>`). */
export class Tmux {
  constructor(readonly label: string, readonly conf: string) {}

  /** Starts a server with `conf` lines and one idle session `base`. */
  static async start(dir: string, label: string, confLines: string[], size: string): Promise<Tmux> {
    const conf = `${dir}/${label}.tmux.conf`;
    await Deno.writeTextFile(conf, confLines.join("\n") + "\n");
    const t = new Tmux(label, conf);
    onCleanup(() => t.kill());
    const [x, y] = size.split("x");
    await t.must("new-session", "-d", "-s", "base", "-x", x, "-y", y, "cat");
    return t;
  }

  /** Runs a tmux command on this server. */
  cmd(...args: string[]): Promise<Out> {
    return run("tmux", ["-L", this.label, "-f", this.conf, ...args], {
      env: { ...Deno.env.toObject(), TMUX: "" },
    });
  }

  /** Runs a tmux command; throws when it fails. */
  async must(...args: string[]): Promise<string> {
    const r = await this.cmd(...args);
    if (r.code !== 0) throw new Error(`tmux ${args.join(" ")}: ${r.stderr.trim()}`);
    return r.stdout;
  }

  /** The server's pid. */
  async pid(): Promise<number> {
    return Number((await this.must("display-message", "-p", "-t", "base", "#{pid}")).trim());
  }

  async kill(): Promise<void> {
    await this.cmd("kill-server");
  }
}

/**
 * A tmux control-mode client (`tmux -C attach -f no-output`): one
 * persistent connection to send commands on, the peer of a socket client.
 */
export class TmuxControl {
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #reader: ReadableStreamDefaultReader<string>;
  #buf = "";
  #enc = new TextEncoder();

  constructor(tmux: Tmux, session: string) {
    this.#child = new Deno.Command("tmux", {
      args: ["-L", tmux.label, "-f", tmux.conf, "-C", "attach-session", "-t", session, "-f", "no-output"],
      env: { ...Deno.env.toObject(), TMUX: "" },
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#reader = this.#child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    onCleanup(() => this.close());
  }

  async #line(): Promise<string> {
    while (true) {
      const nl = this.#buf.indexOf("\n");
      if (nl >= 0) {
        const line = this.#buf.slice(0, nl);
        this.#buf = this.#buf.slice(nl + 1);
        return line;
      }
      const { value, done } = await this.#reader.read();
      if (done) throw new Error("tmux control client closed");
      this.#buf += value;
    }
  }

  /** The output of the next command this client sent (flags 1; hooks' blocks have 0). */
  async #block(): Promise<string[]> {
    while (true) {
      const line = await this.#line();
      if (!line.startsWith("%begin ")) continue; // a notification
      const [, time, num, flags] = line.split(" ");
      const tag = `${time} ${num}`;
      const out: string[] = [];
      while (true) {
        const l = await this.#line();
        if (l.startsWith(`%end ${tag}`)) break;
        if (l.startsWith(`%error ${tag}`)) throw new Error(`tmux: ${out.join(" ")}`);
        out.push(l);
      }
      if (flags === "1") return out;
    }
  }

  /** Waits until the client is attached and answering. */
  async ready(): Promise<void> {
    await this.#writer.write(this.#enc.encode("display-message -p pf-ready\n"));
    while (!(await this.#block()).includes("pf-ready")) { /* not ours */ }
  }

  /** Sends one command; returns its output lines. */
  async command(cmd: string): Promise<string[]> {
    await this.#writer.write(this.#enc.encode(cmd + "\n"));
    return await this.#block();
  }

  async close(): Promise<void> {
    try {
      await this.#writer.close();
    } catch { /* closed */ }
    try {
      this.#child.kill("SIGTERM");
    } catch { /* gone */ }
    try {
      await this.#child.status;
    } catch { /* gone */ }
  }
}
