/**
 * An in-memory duplex pair for unit tests of framing and the client: what
 * one end writes, the other reads, in chunks of the size written.
 *
 * @module
 */
import type { Duplex } from "./duplex.ts";

/** One end of a {@link memoryPair}. */
export interface MemoryEnd extends Duplex {
  /** Whether this end has been closed. */
  readonly closed: boolean;
}

class Pipe {
  chunks: Uint8Array[] = [];
  waiter: (() => void) | null = null;
  ended = false;
  push(c: Uint8Array) {
    this.chunks.push(c.slice());
    this.waiter?.();
  }
  end() {
    this.ended = true;
    this.waiter?.();
  }
  async read(p: Uint8Array): Promise<number | null> {
    while (!this.chunks.length) {
      if (this.ended) return null;
      await new Promise<void>((r) => (this.waiter = r));
      this.waiter = null;
    }
    const c = this.chunks[0];
    const n = Math.min(p.length, c.length);
    p.set(c.subarray(0, n));
    if (n === c.length) this.chunks.shift();
    else this.chunks[0] = c.subarray(n);
    return n;
  }
}

/** Two connected ends. */
export function memoryPair(): [MemoryEnd, MemoryEnd] {
  const ab = new Pipe();
  const ba = new Pipe();
  const end = (inbox: Pipe, outbox: Pipe): MemoryEnd => {
    let closed = false;
    return {
      get closed() {
        return closed;
      },
      read: (p) => inbox.read(p),
      write: (p) => {
        if (closed || outbox.ended) return Promise.reject(new Deno.errors.BrokenPipe("closed"));
        outbox.push(p);
        return Promise.resolve(p.length);
      },
      close: () => {
        closed = true;
        outbox.end();
        inbox.end();
      },
    };
  };
  return [end(ba, ab), end(ab, ba)];
}
