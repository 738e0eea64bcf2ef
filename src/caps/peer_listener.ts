/**
 * The host's unix socket listener, with each connection's peer credentials.
 *
 * Deno's `Deno.listen` gives no descriptor for an accepted connection, so
 * the kernel's `SO_PEERCRED` (the connecting process's pid, uid and gid, as
 * of its `connect`) cannot be read through it. Here the listening socket is
 * made with socket(2)/bind(2)/listen(2) through FFI; `accept4` and each
 * connection's `recv` run on Deno's blocking pool (`nonblocking: true`
 * symbols: a Promise, the event loop never blocks), `send` tries at once
 * (`MSG_DONTWAIT`) and waits on the pool only when the peer's buffer is full.
 * `MSG_NOSIGNAL`: a peer gone mid-write is an error, never a SIGPIPE.
 * Closing shuts the socket down first (`shutdown(2)` wakes a blocked recv or
 * accept), and the descriptor is closed only once no call on it is in
 * flight, so a late call can never reach whatever reuses its number.
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
const SOCK_CLOEXEC = 0x80000;
const SOL_SOCKET = 1;
const SO_PEERCRED = 17;
const SHUT_RDWR = 2;
const MSG_DONTWAIT = 0x40;
const MSG_NOSIGNAL = 0x4000;
const EINTR = 4;
const EAGAIN = 11;

const SYMBOLS = {
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  bind: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  listen: { parameters: ["i32", "i32"], result: "i32" },
  accept4: { parameters: ["i32", "pointer", "pointer", "i32"], result: "i32", nonblocking: true },
  getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
  recv: { parameters: ["i32", "buffer", "usize", "i32"], result: "isize", nonblocking: true },
  recv_now: { parameters: ["i32", "buffer", "usize", "i32"], result: "isize", name: "recv" },
  send: { parameters: ["i32", "buffer", "usize", "i32"], result: "isize", nonblocking: true },
  send_now: { parameters: ["i32", "buffer", "usize", "i32"], result: "isize", name: "send" },
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

/**
 * An error for a failed call. A `nonblocking` symbol runs on another thread,
 * whose errno this thread cannot read: such a call that fails is made again
 * at once with `MSG_DONTWAIT`, which tells it.
 */
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

/** An accepted socket served as a {@link Duplex}. */
class FdConn implements Duplex {
  #inflight = 0;
  #shut = false;
  #closed = false;

  constructor(private readonly _lib: Libc, private readonly _fd: number) {}

  async read(p: Uint8Array): Promise<number | null> {
    if (p.length === 0) return 0;
    while (true) {
      if (this.#shut) return null;
      // Whatever is already there is taken at once; only an empty socket waits on the pool.
      let n = Number(this._lib.symbols.recv_now(this._fd, p, BigInt(p.length), MSG_DONTWAIT));
      if (n < 0) {
        const code = errno(this._lib);
        if (code === EINTR) continue;
        if (code !== EAGAIN) {
          if (this.#shut) return null;
          throw failure("recv", code);
        }
        n = await this.#pooled(() => this._lib.symbols.recv(this._fd, p, BigInt(p.length), 0));
        if (n < 0) continue; // errno is the pool thread's: ask again at once, which tells it
      }
      return n === 0 ? null : n;
    }
  }

  async write(p: Uint8Array): Promise<number> {
    while (true) {
      if (this.#shut) throw new Error("connection closed");
      const n = Number(
        this._lib.symbols.send_now(this._fd, p, BigInt(p.length), MSG_DONTWAIT | MSG_NOSIGNAL),
      );
      if (n >= 0) return n;
      const code = errno(this._lib);
      if (code === EINTR) continue;
      if (code !== EAGAIN) throw failure("send", code);
      // The peer's buffer is full: wait for room on the pool (shutdown wakes it).
      const sent = await this.#pooled(() =>
        this._lib.symbols.send(this._fd, p, BigInt(p.length), MSG_NOSIGNAL)
      );
      if (sent >= 0) return sent;
    }
  }

  async #pooled(call: () => Promise<number | bigint>): Promise<number> {
    this.#inflight++;
    try {
      return Number(await call());
    } finally {
      if (--this.#inflight === 0 && this.#shut) this.#release();
    }
  }

  close(): void {
    if (this.#shut) return;
    this.#shut = true;
    this._lib.symbols.shutdown(this._fd, SHUT_RDWR);
    if (this.#inflight === 0) this.#release();
  }

  #release(): void {
    if (this.#closed) return;
    this.#closed = true;
    this._lib.symbols.close(this._fd);
  }
}

/** The FFI listener: see the module header. */
class FfiListener implements PeerListener {
  #shut = false;
  #accepting = false;
  #closed = false;

  constructor(private readonly _lib: Libc, private readonly _fd: number) {}

  async *[Symbol.asyncIterator](): AsyncIterator<Accepted> {
    while (!this.#shut) {
      this.#accepting = true;
      let fd: number;
      try {
        fd = await this._lib.symbols.accept4(this._fd, null, null, SOCK_CLOEXEC);
      } finally {
        this.#accepting = false;
        if (this.#shut) this.#release();
      }
      if (this.#shut) {
        if (fd >= 0) this._lib.symbols.close(fd);
        return;
      }
      if (fd < 0) continue; // ECONNABORTED, EINTR, EMFILE: try again
      yield { conn: new FdConn(this._lib, fd), peer: peerOf(this._lib, fd) };
    }
  }

  close(): void {
    if (this.#shut) return;
    this.#shut = true;
    // shutdown(2) on a listening socket wakes a blocked accept (EINVAL).
    this._lib.symbols.shutdown(this._fd, SHUT_RDWR);
    if (!this.#accepting) this.#release();
  }

  #release(): void {
    if (this.#closed) return;
    this.#closed = true;
    this._lib.symbols.close(this._fd);
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
  const fd = lib.symbols.socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
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
