/**
 * System methods: liveness, identity, capabilities, shutdown.
 *
 * @module
 */
import { PROTOCOL_VERSION, VERSION } from "../../spec/codes.ts";
import { gatedMethods, type Method, methods } from "../../spec/protocol.ts";
import { gateOpen } from "../context.ts";
import type { FamilyHandlers } from "./_types.ts";
import { HELLO } from "../clients.ts";
import { hostStats } from "../stats.ts";

/** The `system.*` handlers. */
export const system: FamilyHandlers<"system"> = {
  "system.ping": () => ({ pong: true, ts: Date.now() }),
  "system.identify": (ctx, _params, conn) => ({
    name: "paneflow",
    version: VERSION,
    protocol: PROTOCOL_VERSION,
    pid: Deno.pid,
    socket: ctx.socketPath,
    started_at: ctx.startedAt,
    caller: ctx.caps.describeCaller(conn),
  }),
  "system.capabilities": (ctx) => ({
    scripting: gateOpen(ctx, "send"),
    keystrokes: gateOpen(ctx, "keystroke"),
    ai_unrestricted: ctx.config.ai_unrestricted,
    fence: ctx.config.ai_injection_fence,
    methods: [...Object.keys(methods), "events.subscribe"].filter((m) => {
      const gate = gatedMethods[m as Method];
      return !gate || gateOpen(ctx, gate);
    }),
  }),
  "system.hello": (_ctx, params, conn) => {
    Object.assign(conn.state(HELLO), params);
    return { ok: true };
  },
  "system.clients": (ctx, _params, conn) => ({
    clients: ctx.clients.list().map((c) => ({ ...c, self: c.id === conn.id })),
  }),
  "system.stats": (ctx) => hostStats(ctx),
  "system.shutdown": (ctx) => {
    setTimeout(ctx.shutdown, 0);
    return { ok: true };
  },
};
