/**
 * What the handler tables of ptywright's family share: the handler type
 * (handlers get their connection) and the per-host and per-connection state.
 *
 * @module
 */
import { RpcError } from "../../errors.ts";
import { PwError, type PwMethod, type PwParams } from "../../spec/ptywright.ts";
import type { Sessions } from "../../session/mod.ts";
import { Notifications } from "../../session/notify.ts";
import type { Conn } from "../conn.ts";
import type { HostContext } from "../rpc.ts";

/** A handler of the family. */
export type PwHandler<M extends PwMethod> = (
  ctx: HostContext,
  params: PwParams<M>,
  conn: Conn | undefined,
) => Promise<unknown> | unknown;
export type PwHandlers<M extends PwMethod> = { [K in M]: PwHandler<K> };

/** The host's sessions. */
export function sessionsOf(ctx: HostContext): Sessions {
  if (!ctx.sessions) throw new RpcError(PwError.Internal, "this host has no session support");
  return ctx.sessions;
}

/** The connection's notification state (created on first use). */
export function notificationsOf(ctx: HostContext, conn: Conn | undefined): Notifications {
  if (!conn) throw new RpcError(PwError.Internal, "notifications need a connection");
  let n = conn.state.get("ptywright.notifications") as Notifications | undefined;
  if (!n) conn.state.set("ptywright.notifications", n = new Notifications(sessionsOf(ctx), conn));
  return n;
}
