/**
 * JSON-RPC dispatch: validates a request against the protocol module, checks
 * the write gate, runs the handler and maps every error in one place.
 *
 * The seam new capabilities plug into:
 *
 * - A method family is one file, `methods/<namespace>.ts`, exporting
 *   `const <ns>: FamilyHandlers<"<ns>">` (a handler for every `<ns>.*`
 *   method in `spec/protocol.ts`, and nothing else). `handlers` below
 *   spreads the families into one table (as tmux merges `cmd_table`); its
 *   type, `Handlers`, makes a method without a handler a compile error.
 * - A handler is `(ctx: HostContext, params, conn: Connection)`:
 *   - `ctx` (`context.ts`): config, registry, pool, agents, socket path,
 *     shutdown, log — host-lifetime objects, no dispatcher import;
 *   - `params`: already validated by the method's zod schema;
 *   - `conn` (`connection.ts`): `id` (unique per host), `kind`
 *     ("socket" | "stdio" | "internal"), `notify(method, params)` (held until
 *     the running handler's reply is written: response before notification),
 *     `onClose(fn)` (subscriptions, waits and cursors clean up here),
 *     `state(stateKey("name", init))` (a per-connection bag a service keys
 *     with its own `StateKey`), `send(value)` and `closed`.
 *   Return the result or throw `RpcError`; anything else becomes -32603.
 * - Requests on one connection are answered in order; connections run
 *   concurrently. `events.subscribe` turns a connection into an event stream
 *   (`socket.ts`).
 *
 * @module
 */
import { z } from "zod";
import { ErrorCode, ErrorReason } from "../spec/codes.ts";
import { describeZodError, gatedMethods, type Method, methods } from "../spec/protocol.ts";
import { errorChain, RpcError } from "../errors.ts";
import type { Request, Response } from "../wire/envelope.ts";
import { type Connection, internalConnection } from "../core/connection.ts";
import { gateOpen, type HostContext } from "./context.ts";
import { ai } from "./methods/ai.ts";
import { fleet } from "./methods/fleet.ts";
import { usage } from "./methods/usage.ts";
import { surface } from "./methods/surface.ts";
import { system } from "./methods/system.ts";
import type { Handler, Handlers } from "./methods/_types.ts";
import { workspace } from "./methods/workspace.ts";
import { isPtywrightMethod } from "../spec/ptywright.ts";
import { callPtywright } from "./methods/ptywright.ts";
import { queue } from "./methods/queue.ts";
import { restore } from "./methods/restore.ts";
import { notify } from "./methods/notify.ts";

export type { HostContext } from "./context.ts";
export { parseEnvelope, type Request, type Response } from "../wire/envelope.ts";

/** Every method's handler, one family per namespace. */
const handlers: Handlers = {
  ...system,
  ...workspace,
  ...surface,
  ...fleet,
  ...ai,
  ...queue,
  ...restore,
  ...notify,
  ...usage,
};

function gateMessage(method: string, gate: "send" | "keystroke"): string {
  return gate === "send"
    ? `${method} is gated: start the host with PANEFLOW_IPC_SCRIPTING=1 in its environment or set "ai_unrestricted": true in the config`
    : `${method} is gated: start the host with PANEFLOW_IPC_SCRIPTING=1 in its environment${
      method === "system.shutdown" ? `, or stop it with SIGTERM (kill ${Deno.pid})` : ""
    }`;
}

/** Runs one request and builds its response; never throws. */
export async function dispatch(ctx: HostContext, req: Request, conn: Connection): Promise<Response> {
  try {
    const result = await call(ctx, req.method, req.params, conn);
    return { jsonrpc: "2.0", id: req.id, result };
  } catch (err) {
    return { jsonrpc: "2.0", id: req.id, error: toWireError(err) };
  }
}

/** Runs a method by name with unvalidated params. */
export async function call(
  ctx: HostContext,
  method: string,
  params: unknown,
  conn: Connection = internalConnection(),
): Promise<unknown> {
  // ptywright's family (docs/ptywright.md) has its own table and error texts.
  if (isPtywrightMethod(method)) {
    ctx.caps.authorize(method, params, conn);
    return await callPtywright(ctx, method, params, conn);
  }
  if (!Object.hasOwn(methods, method)) {
    throw new RpcError(ErrorCode.MethodNotFound, `Method not found: "${method}"`);
  }
  const m = method as Method;
  const gate = gatedMethods[m];
  if (gate && !gateOpen(ctx, gate)) {
    throw new RpcError(ErrorCode.MethodNotFound, gateMessage(m, gate), { reason: ErrorReason.Gated });
  }
  if (Array.isArray(params)) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Invalid params for ${m}: "params" must be an object of named fields, not an array`,
    );
  }
  let parsed;
  try {
    parsed = methods[m].safeParse(params);
  } catch (e) {
    // A recursive schema (a layout tree) on absurdly nested input overflows the stack.
    if (e instanceof RangeError) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        `Invalid params for ${m}: params are nested too deeply`,
        undefined,
        { cause: e },
      );
    }
    throw e;
  }
  if (!parsed.success) {
    throw new RpcError(ErrorCode.InvalidParams, `Invalid params for ${m}: ${describeZodError(parsed.error)}`);
  }
  // Who may: the caller's capabilities over the call's target (src/caps/policy.ts's table).
  ctx.caps.authorize(m, parsed.data, conn);
  // deno-lint-ignore no-explicit-any
  return await (handlers[m] as Handler<any>)(ctx, parsed.data, conn);
}

/**
 * The one place that turns a thrown value into a wire error. An internal
 * error (a throw that is not an `RpcError`, or an `RpcError` -32603 that
 * wraps one) goes to the host's log with its cause chain; the wire gets
 * one line.
 */
export function toWireError(err: unknown): { code: number; message: string; data?: unknown } {
  if (err instanceof RpcError) {
    if (err.code === ErrorCode.InternalError && err.cause !== undefined) {
      console.error(`paneflow: internal error: ${errorChain(err)}`);
    }
    return { code: err.code, message: err.message, ...(err.data ? { data: err.data } : {}) };
  }
  if (err instanceof z.ZodError) {
    return { code: ErrorCode.InvalidParams, message: describeZodError(err) };
  }
  const message = err instanceof Error ? err.message : String(err);
  console.error(`paneflow: internal error: ${errorChain(err)}`);
  return { code: ErrorCode.InternalError, message: `Internal error: ${message.split("\n")[0]}` };
}
