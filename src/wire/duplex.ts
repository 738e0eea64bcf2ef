/**
 * A byte stream with a writer: a `Deno.Conn`, this process's stdio, and
 * later an SSH relay or a WebSocket. Framing, the host's connection loop and
 * the client are written against this and nothing more.
 *
 * @module
 */

/** A byte stream with a writer, such as a `Deno.Conn` or stdio. */
export interface Duplex {
  read(p: Uint8Array): Promise<number | null>;
  write(p: Uint8Array): Promise<number>;
  close(): void;
}

/** Writes all of `data` (a stream write may take only part of it). */
export async function writeAll(conn: Duplex, data: Uint8Array): Promise<void> {
  let off = 0;
  while (off < data.length) off += await conn.write(data.subarray(off));
}
