/**
 * The handler shape every method family uses, and the mapped types that let
 * the compiler check each family (and the merged table) against the protocol.
 *
 * @module
 */
import type { Method, Params } from "../../spec/protocol.ts";
import type { Result, ResultMethod } from "../../spec/results.ts";
import type { RawJson } from "../../wire/raw_json.ts";
import type { Connection } from "../../core/connection.ts";
import type { HostContext } from "../context.ts";

/**
 * What a handler of method `M` answers: its result, or the same as JSON text
 * made elsewhere (a pane worker's snapshot) to go on the wire as it is.
 */
export type Reply<M extends ResultMethod> = Result<M> | RawJson<Result<M>>;

/**
 * A method's handler: validated params in, the method's result (its schema in
 * src/spec/results.ts, as a type) or a thrown RpcError out.
 */
export type Handler<M extends Method> = (
  ctx: HostContext,
  params: Params<M>,
  conn: Connection,
) => Promise<Reply<M>> | Reply<M>;

/** A handler for every method of the protocol. */
export type Handlers = { [M in Method]: Handler<M> };

/** The methods of one namespace (`"surface"` → `surface.read`, `surface.list`, ...). */
export type FamilyMethod<NS extends string> = Extract<Method, `${NS}.${string}`>;

/** A handler for every method of one namespace, and nothing else. */
export type FamilyHandlers<NS extends string> = { [M in FamilyMethod<NS>]: Handler<M> };
