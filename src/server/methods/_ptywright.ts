/**
 * What the handler tables of ptywright's family share: the handler type
 * (handlers get their connection) and the per-host and per-connection state.
 *
 * @module
 */
import type { PwMethod, PwParams } from "../../spec/ptywright.ts";
import type { Sessions } from "../../session/mod.ts";
import { Notifications } from "../../session/notify.ts";
import { stateKey } from "../../core/connection.ts";
import type { Connection } from "../../core/connection.ts";
import type { HostContext } from "../context.ts";
import type { Reply } from "./_types.ts";

/** A handler of the family: validated params in, the method's result out. */
export type PwHandler<M extends PwMethod> = (
  ctx: HostContext,
  params: PwParams<M>,
  conn: Connection,
) => Promise<Reply<M>> | Reply<M>;
export type PwHandlers<M extends PwMethod> = { [K in M]: PwHandler<K> };

/** The host's sessions. */
export function sessionsOf(ctx: HostContext): Sessions {
  return ctx.sessions;
}

const NOTIFY = stateKey<{ n: Notifications | null }>("ptywright.notifications", () => ({ n: null }));

/** The connection's notification state (made on first use). */
export function notificationsOf(ctx: HostContext, conn: Connection): Notifications {
  const slot = conn.state(NOTIFY);
  return slot.n ??= new Notifications(sessionsOf(ctx), conn);
}

/** The connection's notification state if it has one. */
export function existingNotifications(conn: Connection): Notifications | null {
  return conn.state(NOTIFY).n;
}
