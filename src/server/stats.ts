/**
 * `system.stats`: the host's figures for a soak or a dashboard — resident
 * memory, open fds, each pane worker's heap, the event bus (subscribers and
 * the deepest queue) and connections.
 *
 * @module
 */
import type { Result } from "../spec/results.ts";
import type { HostContext } from "./context.ts";

/** The host's RSS and open fds, from /proc (null where there is none). */
function procFigures(): { rss: number; fds: number | null } {
  let fds: number | null = null;
  try {
    fds = [...Deno.readDirSync("/proc/self/fd")].length;
  } catch { /* no /proc */ }
  return { rss: Deno.memoryUsage().rss, fds };
}

/** The result of `system.stats`. */
export async function hostStats(ctx: HostContext): Promise<Result<"system.stats">> {
  const { rss, fds } = procFigures();
  const { heapUsed, heapTotal } = Deno.memoryUsage();
  return {
    rss,
    fds,
    heap_used: heapUsed,
    heap_total: heapTotal,
    workers: await ctx.pool.stats(),
    bus: { subscribers: ctx.bus.size, max_queue: ctx.bus.maxQueue() },
    connections: {
      calls: ctx.clients.calls(),
      streams: ctx.clients.streams(),
    },
    panes: ctx.registry.surfaces.size,
    caps: ctx.caps.stats(),
  };
}
