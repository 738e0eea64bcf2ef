/**
 * The host's unix socket listener, with each connection's peer credentials.
 *
 * Deno's `Deno.listen` gives no descriptor for an accepted connection, so
 * the kernel's `SO_PEERCRED` (the connecting process's pid, uid and gid, as
 * of its `connect`) cannot be read through it. Here the listening socket is
 * made with socket(2)/bind(2)/listen(2) through FFI, and its connections are
 * served by a small reactor: every `accept4`, `recv` and `send` is tried at
 * once without blocking (`MSG_DONTWAIT`); only when the kernel has nothing
 * (EAGAIN) does the caller wait, and all waits share **one** poll(2) on
 * Deno's blocking pool (a `nonblocking: true` symbol: a Promise, the event
 * loop never blocks), woken by an eventfd when the set changes. One pool
 * thread in all, not one per idle connection: Deno's pool is small (about 32
 * threads), and 16 callers beside 20 event streams would exhaust it.
 * `MSG_NOSIGNAL`: a peer gone mid-write is an error, never a SIGPIPE. A
 * closed descriptor is closed only after the poll that may hold it returns,
 * so no wait can reach whatever reuses its number.
 *
 * Linux only (`SO_PEERCRED`); elsewhere {@link listenWithPeers} falls back to
 * `Deno.listen` and connections have no peer (callers are the owner, as
 * before). See docs/security.md.
 *
 * @module
 */
import type { Duplex } from "../wire/duplex.ts";

/** A connecting process, as the kernel saw it at `connect(2)`. */
export interface Peer {
  pid: number;
  uid: number;
  gid: number;
}

/** One accepted connection. */
export interface Accepted {
  conn: Duplex;
  /** Null where the platform gives none (the fallback listener). */
  peer: Peer | null;
}

/** A listener: accept until closed. */
export interface PeerListener extends AsyncIterable<Accepted> {
  close(): void;
}

const AF_UNIX = 1;
const SOCK_STREAM = 1;
const SOCK_NONBLOCK = 0x800;
const SOCK_CLOEXEC = 0x80000;
const SOL_SOCKET = 1;
const SO_PEERCRED = 17;
const SHUT_RDWR = 2;
const MSG_DONTWAIT = 0x40;
const MSG_NOSIGNAL = 0x4000;
const EINTR = 4;
const EAGAIN = 11;
const POLLIN = 1;
const POLLOUT = 4;
const EFD_NONBLOCK = 0x800;
const EFD_CLOEXEC = 0x80000;

const SYMBOLS = {
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  bind: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  listen: { parameters: ["i32", "i32"], result: "i32" },
  accept4: { parameters: ["i32", "pointer", "pointer", "i32"], result: "i32" },
  getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
  recv: { parameters: ["i32", "buffer", "usize", "i32"], result: "isize" },
  send: { parameters: ["i32", "buffer", "usize", "i32"], result: "isize" },
  poll: { parameters: ["buffer", "u64", "i32"], result: "i32", nonblocking: true },
  eventfd: { parameters: ["u32", "i32"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  write: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  shutdown: { parameters: ["i32", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  errno: { parameters: [], result: "pointer", name: "__errno_location" },
} as const;

type Libc = Deno.DynamicLibrary<typeof SYMBOLS>;

let libc: Libc | null | undefined;

function openLibc(): Libc | null {
  if (libc !== undefined) return libc;
  if (Deno.build.os !== "linux") return libc = null;
  try {
    libc = Deno.dlopen("libc.so.6", SYMBOLS);
  } catch {
    libc = null;
  }
  return libc;
}

function errno(lib: Libc): number {
  const p = lib.symbols.errno();
  return p ? new Deno.UnsafePointerView(p).getInt32() : 0;
}

function failure(what: string, code: number): Error {
  return new Error(`${what} failed (errno ${code})`);
}

/** The peer credentials of a connected socket, or null. */
function peerOf(lib: Libc, fd: number): Peer | null {
  const cred = new Uint8Array(12);
  const len = new Uint32Array([12]);
  if (lib.symbols.getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, new Uint8Array(len.buffer)) !== 0) {
    return null;
  }
  const view = new DataView(cred.buffer);
  return { pid: view.getInt32(0, true), uid: view.getUint32(4, true), gid: view.getUint32(8, true) };
}

/** Waits for descriptors to become ready: one poll(2) on the blocking pool for all of them. */
class Reactor {
  #waiters = new Map<number, { read: (() => void)[]; write: (() => void)[] }>();
  #closing: number[] = [];
  #running = false;
  readonly #wake: number;

  constructor(private readonly _lib: Libc) {
    this.#wake = _lib.symbols.eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  }

  /** Resolves once `fd` is readable (or has an error or hang-up). */
  readable(fd: number): Promise<void> {
    return this.#wait(fd, "read");
  }

  /** Resolves once `fd` is writable (or has an error or hang-up). */
  writable(fd: number): Promise<void> {
    return this.#wait(fd, "write");
  }

  #wait(fd: number, what: "read" | "write"): Promise<void> {
    const { promise, resolve } = Promise.withResolvers<void>();
    let w = this.#waiters.get(fd);
    if (!w) this.#waiters.set(fd, w = { read: [], write: [] });
    w[what].push(resolve);
    this.#kick();
    return promise;
  }

  /** Wakes `fd`'s waiters, forgets it and closes it once no poll can hold it. */
  close(fd: number): void {
    const w = this.#waiters.get(fd);
    this.#waiters.delete(fd);
    for (const fn of [...(w?.read ?? []), ...(w?.write ?? [])]) fn();
    if (this.#running) {
      this.#closing.push(fd);
      this.#kick();
    } else this._lib.symbols.close(fd);
  }

  #kick(): void {
    if (this.#running) {
      if (this.#wake >= 0) this._lib.symbols.write(this.#wake, new BigUint64Array([1n]), 8n);
      return;
    }
    this.#running = true;
    void this.#loop();
  }

  async #loop(): Promise<void> {
    try {
      while (this.#waiters.size || this.#closing.length) {
        const fds = [...this.#waiters.keys()];
        const set = new DataView(new ArrayBuffer(8 * (fds.length + 1)));
        set.setInt32(0, this.#wake, true);
        set.setInt16(4, POLLIN, true);
        fds.forEach((fd, i) => {
          const w = this.#waiters.get(fd)!;
          set.setInt32(8 * (i + 1), fd, true);
          set.setInt16(8 * (i + 1) + 4, (w.read.length ? POLLIN : 0) | (w.write.length ? POLLOUT : 0), true);
        });
        const buf = new Uint8Array(set.buffer);
        // Descriptors closed while a poll held them are closed now that none does.
        for (const fd of this.#closing.splice(0)) this._lib.symbols.close(fd);
        if (!this.#waiters.size) break;
        await this._lib.symbols.poll(buf, BigInt(fds.length + 1), -1);
        this._lib.symbols.read(this.#wake, new Uint8Array(8), 8n);
        fds.forEach((fd, i) => {
          const revents = set.getInt16(8 * (i + 1) + 6, true);
          const w = this.#waiters.get(fd);
          if (!revents || !w) return;
          // An error or hang-up wakes both sides: the retried call reports it.
          const wakeRead = (revents & ~POLLOUT) !== 0;
          const wakeWrite = (revents & ~POLLIN) !== 0;
          if (wakeRead) { for (const fn of w.read.splice(0)) fn(); }
          if (wakeWrite) { for (const fn of w.write.splice(0)) fn(); }
          if (!w.read.length && !w.write.length) this.#waiters.delete(fd);
        });
      }
    } finally {
      this.#running = false;
    }
  }
}

/** An accepted socket served as a {@link Duplex}. */
class FdConn implements Duplex {
  #shut = false;

  constructor(
    private readonly _lib: Libc,
    private readonly _reactor: Reactor,
    private readonly _fd: number,
  ) {}

  async read(p: Uint8Array): Promise<number | null> {
    if (p.length === 0) return 0;
    while (true) {
      if (this.#shut) return null;
      const n = Number(this._lib.symbols.recv(this._fd, p, BigInt(p.length), MSG_DONTWAIT));
      if (n >= 0) return n === 0 ? null : n;
      const code = errno(this._lib);
      if (code === EAGAIN) await this._reactor.readable(this._fd);
      else if (code !== EINTR) {
        if (this.#shut) return null;
        throw failure("recv", code);
      }
    }
  }

  async write(p: Uint8Array): Promise<number> {
    while (true) {
      if (this.#shut) throw new Error("connection closed");
      const n = Number(this._lib.symbols.send(this._fd, p, BigInt(p.length), MSG_DONTWAIT | MSG_NOSIGNAL));
      if (n >= 0) return n;
      const code = errno(this._lib);
      // The peer's buffer is full: wait for room.
      if (code === EAGAIN) await this._reactor.writable(this._fd);
      else if (code !== EINTR) throw failure("send", code);
    }
  }

  close(): void {
    if (this.#shut) return;
    this.#shut = true;
    this._lib.symbols.shutdown(this._fd, SHUT_RDWR);
    this._reactor.close(this._fd);
  }
}

/** The FFI listener: see the module header. */
class FfiListener implements PeerListener {
  #shut = false;
  readonly #reactor: Reactor;

  constructor(private readonly _lib: Libc, private readonly _fd: number) {
    this.#reactor = new Reactor(_lib);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Accepted> {
    while (!this.#shut) {
      const fd = this._lib.symbols.accept4(this._fd, null, null, SOCK_CLOEXEC);
      if (fd >= 0) {
        yield { conn: new FdConn(this._lib, this.#reactor, fd), peer: peerOf(this._lib, fd) };
        continue;
      }
      const code = errno(this._lib);
      if (code === EAGAIN) await this.#reactor.readable(this._fd);
      else if (code !== EINTR) {
        // ECONNABORTED, EMFILE and the like: wait for the next one instead of spinning.
        if (this.#shut) return;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  close(): void {
    if (this.#shut) return;
    this.#shut = true;
    this.#reactor.close(this._fd);
  }
}

/** `Deno.listen` where FFI or `SO_PEERCRED` is unavailable: no peers. */
function fallback(path: string): PeerListener {
  const listener = Deno.listen({ transport: "unix", path });
  return {
    async *[Symbol.asyncIterator]() {
      for await (const conn of listener) yield { conn, peer: null };
    },
    close: () => listener.close(),
  };
}

/**
 * Listens on the unix socket `path` (which must not exist). The caller
 * removes the file when done (closing does not unlink it).
 */
export function listenWithPeers(path: string): PeerListener {
  const lib = openLibc();
  if (!lib) return fallback(path);
  const name = new TextEncoder().encode(path);
  if (name.length > 107) throw new Error(`Socket path is too long (over 107 bytes): ${path}`);
  const fd = lib.symbols.socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fallback(path);
  const addr = new Uint8Array(2 + 108);
  new DataView(addr.buffer).setUint16(0, AF_UNIX, true);
  addr.set(name, 2);
  if (lib.symbols.bind(fd, addr, 2 + name.length + 1) !== 0 || lib.symbols.listen(fd, 128) !== 0) {
    const code = errno(lib);
    lib.symbols.close(fd);
    throw failure(`Listening on ${path}`, code);
  }
  return new FfiListener(lib, fd);
}

/** Whether connections carry peer credentials on this platform. */
export function peersKnown(): boolean {
  return openLibc() !== null;
}
