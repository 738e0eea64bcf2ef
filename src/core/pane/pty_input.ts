/**
 * Writing into a PTY master without losing bytes. node-pty hands writes to a
 * Node `tty.ReadStream`, and under Deno's Node compatibility that stream
 * drops whatever the kernel does not take at once: 40,000 bytes to a
 * raw-mode `cat` arrived as 11,776, with no error and no callback. The
 * master is non-blocking, so this writes with write(2) through FFI and
 * retries on EAGAIN until the program has read it all, in order.
 *
 * @module
 */
import { PaneError, PaneErrorCode } from "./errors.ts";

/** errno for "try again" (Linux, macOS) and for a call a signal interrupted. */
const EAGAIN = Deno.build.os === "darwin" ? 35 : 11;
const EINTR = 4;
/** Give up when the program has taken nothing for this long. */
const STALL_MS = 10_000;

type Libc = Deno.DynamicLibrary<{
  write: { parameters: ["i32", "buffer", "usize"]; result: "isize" };
  errno: { parameters: []; result: "pointer"; name: string };
}>;

let libc: Libc | null | undefined;

function openLibc(): Libc | null {
  if (libc !== undefined) return libc;
  const darwin = Deno.build.os === "darwin";
  try {
    libc = Deno.dlopen(darwin ? "libSystem.B.dylib" : "libc.so.6", {
      write: { parameters: ["i32", "buffer", "usize"], result: "isize" },
      errno: { parameters: [], result: "pointer", name: darwin ? "__error" : "__errno_location" },
    }) as Libc;
  } catch {
    libc = null;
  }
  return libc;
}

/**
 * The input side of one PTY master: writes are queued and each resolves once written whole.
 *
 * Once the master is closed its descriptor number is free, and the next
 * `open` anywhere in the host (another pane's PTY, an accepted client
 * socket) may get it: {@link close} is called before the master is, and
 * every write(2) checks it first, so a queued or retried write never lands
 * in whatever took the number.
 */
export class PtyInput {
  #queue: Promise<void> = Promise.resolve();
  #closed = false;

  /**
   * `fd` is the master's file descriptor; `fallback` writes through node-pty
   * where write(2) cannot be reached (no FFI).
   */
  constructor(private readonly _fd: number, private readonly _fallback: (data: string) => void) {}

  /** No byte is written from now on; queued and retrying writes fail with code `exited`. */
  close(): void {
    this.#closed = true;
  }

  /** Whether {@link close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Writes `data` after every earlier write; rejects with a {@link PaneError}
   * of code `stalled` if the program stops reading, `exited` if its terminal
   * is closed.
   */
  write(data: string): Promise<void> {
    const next = this.#queue.then(() => this.#writeAll(new TextEncoder().encode(data)));
    this.#queue = next.catch(() => {});
    return next;
  }

  async #writeAll(bytes: Uint8Array): Promise<void> {
    if (this.#closed) throw closedError();
    const c = openLibc();
    if (!c) return this._fallback(new TextDecoder().decode(bytes));
    let off = 0;
    let wait = 1;
    let progressAt = Date.now();
    while (off < bytes.length) {
      // Checked before every write(2): the number may belong to another file by now.
      if (this.#closed) throw closedError();
      const n = Number(c.symbols.write(this._fd, bytes.subarray(off), BigInt(bytes.length - off)));
      if (n > 0) {
        off += n;
        wait = 1;
        progressAt = Date.now();
        continue;
      }
      const errno = n < 0 ? new Deno.UnsafePointerView(c.symbols.errno()!).getInt32() : EAGAIN;
      if (errno === EINTR) continue;
      if (errno !== EAGAIN) throw new Error(`write to the terminal failed (errno ${errno})`);
      if (Date.now() - progressAt > STALL_MS) {
        throw new PaneError(
          PaneErrorCode.Stalled,
          `the program stopped reading its input: ${off} of ${bytes.length} bytes taken, then nothing for ${
            STALL_MS / 1000
          } s`,
        );
      }
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 20);
    }
  }
}

function closedError(): PaneError {
  return new PaneError(PaneErrorCode.Exited, "the pane's terminal is closed");
}
