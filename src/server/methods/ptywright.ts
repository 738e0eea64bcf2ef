/**
 * Dispatch for ptywright's method family (`server.*`, `session.*`), which
 * keeps its own error table (src/spec/ptywright.ts): params validated with
 * serde-like messages, an unknown method is `unknown method: <name>`, and
 * every handler gets its connection.
 *
 * @module
 */
import type { z } from "zod";
import { RpcError } from "../../errors.ts";
import { describePwZodError, PwError, type PwMethod, pwParams } from "../../spec/ptywright.ts";
import type { Connection } from "../../core/connection.ts";
import type { HostContext } from "../context.ts";
import { existingNotifications, type PwHandler } from "./_ptywright.ts";
import { serverMethods } from "./server.ts";
import { sessionMethods } from "./session.ts";
import { callPlugins, isPluginMethod } from "./plugins.ts";

const table: Record<string, PwHandler<PwMethod>> = { ...serverMethods, ...sessionMethods } as never;

/** Calls one method of the family. */
export async function callPtywright(
  ctx: HostContext,
  method: string,
  params: unknown,
  conn: Connection,
): Promise<unknown> {
  if (isPluginMethod(method)) {
    conn.keepAlive = true;
    if (params === null || typeof params !== "object" || Array.isArray(params)) {
      throw new RpcError(PwError.InvalidParams, "invalid type: params must be an object");
    }
    try {
      return await callPlugins(ctx, method, params, conn);
    } finally {
      existingNotifications(conn)?.flush().catch(() => {});
    }
  }
  if (!Object.hasOwn(pwParams, method) || !table[method]) {
    throw new RpcError(PwError.MethodNotFound, `unknown method: ${method}`);
  }
  // A ptywright client sits quietly between calls: no idle deadline for it.
  conn.keepAlive = true;
  if (params === null || typeof params !== "object" || Array.isArray(params)) {
    throw new RpcError(PwError.InvalidParams, "invalid type: params must be an object");
  }
  const schema = pwParams[method as PwMethod] as z.ZodType;
  let parsed;
  try {
    parsed = schema.safeParse(params);
  } catch {
    throw new RpcError(PwError.InvalidParams, "params are nested too deeply");
  }
  if (!parsed.success) throw new RpcError(PwError.InvalidParams, describePwZodError(parsed.error));
  try {
    return await table[method](ctx, parsed.data as never, conn);
  } finally {
    // As ptywright does after each message: poll (what it sends is held until this reply is written).
    existingNotifications(conn)?.flush().catch(() => {});
  }
}
