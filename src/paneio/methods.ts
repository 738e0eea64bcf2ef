/**
 * PaneIO's handlers: `surface.ask`, `surface.is_ready`, `surface.clear`,
 * `queue.info`. Bodies only delegate.
 *
 * @module
 */
import type { z } from "zod";
import type { Result } from "../spec/results.ts";
import { ask, waitReady } from "./ask.ts";
import type { paneioMethods } from "../spec/paneio.ts";
import type { PaneIO } from "./service.ts";

type P<M extends keyof typeof paneioMethods> = z.infer<(typeof paneioMethods)[M]>;

/** What the handlers need of the host: its PaneIO, and whether pane text is fenced by default. */
interface Parts {
  paneio: PaneIO;
  config: { ai_injection_fence: boolean };
}

/** The handler table merged into the host's. */
export const paneioHandlers = {
  "surface.ask": async (ctx: Parts, p: P<"surface.ask">): Promise<Result<"surface.ask">> => {
    const io = ctx.paneio;
    const s = io.host.surface(p.surface_id);
    const fenced = p.fenced ?? ctx.config.ai_injection_fence;
    const r = await ask(io.host, s, {
      text: p.text,
      marker: p.marker,
      timeoutMs: p.timeout_ms ?? 30_000,
      submit: p.submit ?? true,
      fenced,
    });
    return { surface_id: s.id, ...r, fenced };
  },
  "surface.is_ready": async (ctx: Parts, p: P<"surface.is_ready">): Promise<Result<"surface.is_ready">> => {
    const io = ctx.paneio;
    const s = io.host.surface(p.surface_id);
    const started = Date.now();
    const r = p.timeout_ms ? await waitReady(io.host, s, started + p.timeout_ms) : await io.host.ready(s);
    return {
      surface_id: s.id,
      ready: r.ready,
      reason: r.reason,
      detail: r.detail,
      elapsed_ms: Date.now() - started,
    };
  },
  "surface.clear": async (ctx: Parts, p: P<"surface.clear">): Promise<Result<"surface.clear">> => {
    const io = ctx.paneio;
    const s = io.host.surface(p.surface_id);
    await io.host.clear(s);
    return { surface_id: s.id, cleared: true };
  },
  "queue.info": (ctx: Parts): Result<"queue.info"> => {
    const q = ctx.paneio.queue;
    return q
      ? { root: q.root, delivering: true, counts: q.counts() }
      : { root: null, delivering: false, counts: null };
  },
};
