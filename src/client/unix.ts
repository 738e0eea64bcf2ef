/**
 * The unix-socket transport: a {@link Duplex} to a host on this machine.
 * (A later transport relays the same bytes over SSH.)
 *
 * @module
 */
import type { Duplex } from "../wire/duplex.ts";

/** Connects to the unix socket at `path`; throws when nothing listens there. */
export async function connectUnix(path: string): Promise<Duplex> {
  return await Deno.connect({ transport: "unix", path });
}
