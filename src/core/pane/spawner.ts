/**
 * Starting pane programs from a thread that parses nothing.
 *
 * The pane workers parse output at a lower CPU priority than the host's
 * main thread (nice {@link WORKER_NICE}): when the cores are busy, a
 * request on the socket (`system.ping`, a `read`, an event) is served
 * before the next slice of a flood (with 100 panes and a pane opened and
 * closed every 200 ms, `system.ping` p99 went from 5.2–5.4 ms to
 * 3.7–4.0 ms). A process inherits the priority of the thread that starts
 * it, and an unprivileged thread cannot raise its priority again, so a
 * program started by a pane worker would run niced too. The pane workers
 * therefore ask one small worker at the host's own priority to start their
 * programs ({@link spawnerWorker}, ./spawn_worker.ts): synchronously, over
 * a `MessagePort` with the answer in shared memory (the worker blocks for
 * the spawn, as it did when it spawned itself), and the exit comes back as
 * a message.
 *
 * @module
 */

/**
 * How much lower the pane workers' priority is than the host's (nice(2)
 * steps; `PANEFLOW_WORKER_NICE`, 0–19, changes it, 0 turns it off).
 */
export const WORKER_NICE = 2;
/** How long a pane worker waits for the spawner to start a program. */
const SPAWN_WAIT_MS = 10_000;
/** Bytes of an error message the spawner can hand back. */
const ERROR_BYTES = 1024;

/** What the spawner is asked to start (a pane's wrapped program, see ./host_pty.ts). */
export interface SpawnOrder {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** [state, pid, error length] as Int32s, then the error's UTF-8 bytes. */
  cell: SharedArrayBuffer;
}

/** How a started program ended (Deno's `CommandStatus`: a signal's number is in `code` - 128). */
export interface SpawnExit {
  pid: number;
  code: number;
  signal: boolean;
}

/** A started program: its pid and its end. */
export interface Spawned {
  pid: number;
  status: Promise<{ code: number; signal: boolean }>;
}

/** Starts a program with its stdio on /dev/null. */
export type Spawn = (file: string, args: string[], env: Record<string, string>, cwd?: string) => Spawned;

/** Starts it in this thread. */
export const spawnHere: Spawn = (file, args, env, cwd) => {
  const child = new Deno.Command(file, {
    args,
    env,
    clearEnv: true,
    ...(cwd ? { cwd } : {}),
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  return { pid: child.pid, status: child.status.then((s) => ({ code: s.code, signal: s.signal !== null })) };
};

/** The spawner's side: answers the orders that come in on `port`. */
export function serveSpawns(port: MessagePort): void {
  port.onmessage = (e: MessageEvent<SpawnOrder>) => {
    const o = e.data;
    const head = new Int32Array(o.cell, 0, 3);
    let spawned: Spawned;
    try {
      spawned = spawnHere(o.file, o.args, o.env, o.cwd);
    } catch (err) {
      const bytes = new TextEncoder().encode((err as Error).message).subarray(0, ERROR_BYTES);
      new Uint8Array(o.cell, 12).set(bytes);
      head[2] = bytes.length;
      Atomics.store(head, 0, 2);
      Atomics.notify(head, 0);
      return;
    }
    head[1] = spawned.pid;
    Atomics.store(head, 0, 1);
    Atomics.notify(head, 0);
    void spawned.status.then((s) => port.postMessage({ pid: spawned.pid, ...s } satisfies SpawnExit));
  };
}

/** The pane worker's side: a {@link Spawn} through the spawner on `port`. */
export function spawnThrough(port: MessagePort): Spawn {
  // A program's exit cannot come before its spawn is registered: the exit is a message, and
  // messages are read only after the task that spawned (and registered) has ended.
  const ends = new Map<number, (s: { code: number; signal: boolean }) => void>();
  port.onmessage = (e: MessageEvent<SpawnExit>) => {
    const { pid, code, signal } = e.data;
    ends.get(pid)?.({ code, signal });
    ends.delete(pid);
  };
  return (file, args, env, cwd) => {
    const cell = new SharedArrayBuffer(12 + ERROR_BYTES);
    const head = new Int32Array(cell, 0, 3);
    port.postMessage({ file, args, env, cwd, cell } satisfies SpawnOrder);
    if (Atomics.wait(head, 0, 0, SPAWN_WAIT_MS) === "timed-out" && Atomics.load(head, 0) === 0) {
      throw new Error(`the spawner did not start ${file} within ${SPAWN_WAIT_MS / 1000} s`);
    }
    if (head[0] === 2) throw new Error(new TextDecoder().decode(new Uint8Array(cell, 12, head[2]).slice()));
    const pid = head[1];
    return { pid, status: new Promise((resolve) => ends.set(pid, resolve)) };
  };
}

/** Starts the spawner worker (the pool's, one per host). */
export function spawnerWorker(): Worker {
  return new Worker(new URL("./spawn_worker.ts", import.meta.url).href, { type: "module" });
}

/** Lowers the calling thread's CPU priority by {@link WORKER_NICE} (Linux; elsewhere nothing). */
export function niceThisThread(): boolean {
  const set = Deno.env.get("PANEFLOW_WORKER_NICE");
  const steps = set !== undefined && /^\d{1,2}$/.test(set) && Number(set) <= 19 ? Number(set) : WORKER_NICE;
  if (Deno.build.os !== "linux" || steps === 0) return false;
  try {
    const lib = Deno.dlopen("libc.so.6", {
      gettid: { parameters: [], result: "i32" },
      getpriority: { parameters: ["i32", "u32"], result: "i32" },
      setpriority: { parameters: ["i32", "u32", "i32"], result: "i32" },
    });
    const tid = lib.symbols.gettid();
    // PRIO_PROCESS with a thread id: that thread only (Linux).
    const ok = lib.symbols.setpriority(0, tid, lib.symbols.getpriority(0, tid) + steps) === 0;
    lib.close();
    return ok;
  } catch {
    return false;
  }
}
