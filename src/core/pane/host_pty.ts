/**
 * Starting a pane's program without forking the host.
 *
 * node-pty spawns with forkpty(3): the kernel copies the page tables of the
 * whole host (hundreds of MB with 100 panes), and every page the host writes
 * afterwards takes a copy-on-write fault until the child has exec'd. In a
 * 360 MB process that is 8.8 ms per spawn, and every thread of the host
 * stalls beside it (with a pane opened and closed every 200 ms beside 100
 * panes, `system.ping` p99 was 13 ms against 5 ms without the churn).
 *
 * Here the PTY pair is opened with posix_openpt(3) through FFI, and the
 * program starts with `Deno.Command` (posix_spawn: the child shares the
 * host's memory until its exec) under setsid(1): the new session's leader
 * (../../isolation/spawn.ts's wrapper) opens the terminal by name, which
 * makes it the session's controlling terminal, as forkpty's child gets it.
 * The host keeps its own descriptor of the terminal until the program exits,
 * so reading the master ends (EIO) only once the program has exited and every
 * byte it wrote has been read: node-pty's order of events (data, then the
 * socket's close, then the exit), which ./drain.ts relies on, is kept.
 *
 * Linux only, with bash and setsid(1); elsewhere panes spawn with node-pty
 * ({@link canSpawnDirect}).
 *
 * @module
 */
import tty from "node:tty";
import { canWrap, firstFile, wrapSpawn } from "../isolation/spawn.ts";
import { type Spawn, type Spawned, spawnHere } from "./spawner.ts";

/** What a pane needs of its PTY (node-pty's `IPty` has it too). */
export interface PanePty {
  readonly pid: number;
  /** The master's descriptor (./pty_input.ts writes to it). */
  readonly fd: number;
  onData(fn: (data: Uint8Array) => void): void;
  onExit(fn: (e: { exitCode: number; signal?: number }) => void): void;
  pause(): void;
  resume(): void;
  write(data: string): void;
  kill(signal?: string): void;
  resize(cols: number, rows: number): void;
}

const SETSID = firstFile(["/usr/bin/setsid", "/bin/setsid"]);

const O_RDWR = 2;
const O_NOCTTY = 0o400;
const O_NONBLOCK = 0o4000;
const O_CLOEXEC = 0o2000000;
const F_GETFL = 3;
const F_SETFL = 4;
const TIOCSWINSZ = 0x5414n;
/** node-pty's input flags beside the kernel's defaults (ICRNL, IXON): BRKINT, IXANY, IMAXBEL, IUTF8. */
const IFLAGS = 0x2 | 0x800 | 0x2000 | 0x4000;
const TERMIOS_BYTES = 60;
/** How long after the exit a master that has not closed is asked to (node-pty's DESTROY_SOCKET_TIMEOUT_MS). */
const CLOSE_AFTER_EXIT_MS = 200;

const SYMBOLS = {
  posix_openpt: { parameters: ["i32"], result: "i32" },
  grantpt: { parameters: ["i32"], result: "i32" },
  unlockpt: { parameters: ["i32"], result: "i32" },
  ptsname_r: { parameters: ["i32", "buffer", "usize"], result: "i32" },
  open: { parameters: ["buffer", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
  ioctl: { parameters: ["i32", "u64", "buffer"], result: "i32" },
  tcgetattr: { parameters: ["i32", "buffer"], result: "i32" },
  tcsetattr: { parameters: ["i32", "i32", "buffer"], result: "i32" },
} as const;

let libc: Deno.DynamicLibrary<typeof SYMBOLS>["symbols"] | null | undefined;

function openLibc() {
  if (libc !== undefined) return libc;
  try {
    libc = Deno.dlopen("libc.so.6", SYMBOLS).symbols;
  } catch {
    libc = null;
  }
  return libc;
}

/** Whether panes can start without forking the host (Linux, FFI, bash and setsid). */
export function canSpawnDirect(): boolean {
  if (Deno.build.os !== "linux" || SETSID === null || Deno.env.get("PANEFLOW_SPAWN") === "node-pty") {
    return false;
  }
  return canWrap() && openLibc() !== null;
}

function winsize(cols: number, rows: number): Uint8Array {
  return new Uint8Array(new Uint16Array([rows, cols, 0, 0]).buffer);
}

/** A PTY pair: the master (non-blocking) and the host's own descriptor of the terminal, both close-on-exec. */
function openPair(cols: number, rows: number): { master: number; slave: number; name: string } {
  const c = openLibc()!;
  const master = c.posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) throw new Error("posix_openpt failed: no PTY available");
  let slave = -1;
  try {
    const buf = new Uint8Array(128);
    if (
      c.grantpt(master) !== 0 || c.unlockpt(master) !== 0 ||
      c.ptsname_r(master, buf, BigInt(buf.length)) !== 0
    ) {
      throw new Error("cannot unlock the new PTY");
    }
    const name = new TextDecoder().decode(buf.subarray(0, buf.indexOf(0)));
    slave = c.open(new TextEncoder().encode(`${name}\0`), O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) throw new Error(`cannot open ${name}`);
    const termios = new Uint8Array(TERMIOS_BYTES);
    if (c.tcgetattr(slave, termios) === 0) {
      const view = new DataView(termios.buffer);
      view.setUint32(0, view.getUint32(0, true) | IFLAGS, true);
      c.tcsetattr(slave, 0, termios);
    }
    c.ioctl(master, TIOCSWINSZ, winsize(cols, rows));
    c.fcntl(master, F_SETFL, c.fcntl(master, F_GETFL, 0) | O_NONBLOCK);
    return { master, slave, name };
  } catch (e) {
    if (slave >= 0) c.close(slave);
    c.close(master);
    throw e;
  }
}

/** Options as node-pty's spawn takes them (the subset panes use). */
export interface SpawnOptions {
  cols: number;
  rows: number;
  cwd?: string;
  env: Record<string, string>;
  /** TERM for the program. */
  name: string;
}

/** A program on a PTY of its own, started without forking the host. */
export class DirectPty implements PanePty {
  readonly pid: number;
  readonly fd: number;
  /** The master's stream (node-pty calls its socket `_socket`: ./drain.ts wraps its `destroy`). */
  readonly _socket: tty.ReadStream;
  #slave: number;
  #status: { exitCode: number; signal?: number } | null = null;
  #closed = false;
  #closeTimer: ReturnType<typeof setTimeout> | null = null;
  #exitFns: ((e: { exitCode: number; signal?: number }) => void)[] = [];

  /** `spawn` starts the program (./spawner.ts: in this thread, or through the spawner). */
  constructor(file: string, args: string[], opts: SpawnOptions, spawn: Spawn = spawnHere) {
    const { master, slave, name } = openPair(opts.cols, opts.rows);
    const run = wrapSpawn(file, args, { ...opts.env, TERM: opts.name }, name);
    let child: Spawned;
    try {
      child = spawn(SETSID!, [run.file, ...run.args], run.env, opts.cwd);
    } catch (e) {
      openLibc()!.close(slave);
      openLibc()!.close(master);
      throw e;
    }
    this.pid = child.pid;
    this.fd = master;
    this.#slave = slave;
    this._socket = new tty.ReadStream(master);
    // EAGAIN and EIO (the end of the output) are how a PTY read ends; nothing to report.
    this._socket.on("error", () => {});
    this._socket.on("close", () => {
      this.#closed = true;
      if (this.#closeTimer !== null) clearTimeout(this.#closeTimer);
      this.#emitExit();
    });
    void child.status.then((s) => {
      // Killed by a signal: Deno reports 128 + its number as the code.
      this.#status = s.signal ? { exitCode: 0, signal: s.code - 128 } : { exitCode: s.code };
      this.#closeSlave();
      if (this.#closed) return this.#emitExit();
      this.#closeTimer = setTimeout(() => {
        this.#closeTimer = null;
        if (!this.#closed) this._socket.destroy();
      }, CLOSE_AFTER_EXIT_MS);
    });
  }

  #closeSlave(): void {
    if (this.#slave < 0) return;
    openLibc()!.close(this.#slave);
    this.#slave = -1;
  }

  #emitExit(): void {
    if (!this.#status || !this.#closed) return;
    const status = this.#status;
    for (const fn of this.#exitFns.splice(0)) fn(status);
  }

  onData(fn: (data: Uint8Array) => void): void {
    this._socket.on("data", fn);
  }

  onExit(fn: (e: { exitCode: number; signal?: number }) => void): void {
    this.#exitFns.push(fn);
  }

  pause(): void {
    this._socket.pause();
  }

  resume(): void {
    this._socket.resume();
  }

  write(data: string): void {
    this._socket.write(data);
  }

  kill(signal = "SIGHUP"): void {
    try {
      Deno.kill(this.pid, signal as Deno.Signal);
    } catch { /* already gone */ }
  }

  resize(cols: number, rows: number): void {
    openLibc()!.ioctl(this.fd, TIOCSWINSZ, winsize(cols, rows));
  }
}
