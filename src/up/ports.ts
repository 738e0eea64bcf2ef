/**
 * `${port_offset}` allocation (docs/up.md): from `port_base` in strides of 10,
 * skipping ports already bound on 127.0.0.1 and ports handed out before.
 *
 * @module
 */

/** Ports between allocations. */
export const PORT_STRIDE = 10;

/** Whether nothing listens on `port` at 127.0.0.1 (probed by listening on it). */
export function portFree(port: number): boolean {
  try {
    const l = Deno.listen({ hostname: "127.0.0.1", port, transport: "tcp" });
    l.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * `count` free ports: `base`, `base + 10`, ... skipping bound ones and those
 * in `taken`. Throws when the range runs out.
 */
export function allocatePorts(
  base: number,
  count: number,
  opts: { taken?: Set<number>; free?: (port: number) => boolean } = {},
): number[] {
  const free = opts.free ?? portFree;
  const out: number[] = [];
  for (let port = base; out.length < count; port += PORT_STRIDE) {
    if (port > 65_535) {
      throw new Error(
        `No free port from ${base} in strides of ${PORT_STRIDE}: ${out.length} of ${count} found`,
      );
    }
    if (opts.taken?.has(port)) continue;
    if (free(port)) out.push(port);
  }
  return out;
}
