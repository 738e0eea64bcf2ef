/**
 * The handler shape every method family uses, and the mapped types that let
 * the compiler check each family (and the merged table) against the protocol.
 *
 * @module
 */
import type { Method, Params } from "../../spec/protocol.ts";
import type { Connection } from "../../core/connection.ts";
import type { HostContext } from "../context.ts";

/** A method's handler: validated params in, a result (or a thrown RpcError) out. */
export type Handler<M extends Method> = (
  ctx: HostContext,
  params: Params<M>,
  conn: Connection,
) => Promise<unknown> | unknown;

/** A handler for every method of the protocol. */
export type Handlers = { [M in Method]: Handler<M> };

/** The methods of one namespace (`"surface"` → `surface.read`, `surface.list`, ...). */
export type FamilyMethod<NS extends string> = Extract<Method, `${NS}.${string}`>;

/** A handler for every method of one namespace, and nothing else. */
export type FamilyHandlers<NS extends string> = { [M in FamilyMethod<NS>]: Handler<M> };
