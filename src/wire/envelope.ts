/**
 * The JSON-RPC 2.0 envelope: request and response shapes, and the check of
 * an incoming request's envelope (before its method's params are
 * validated). No zod: the CLI and every transport may load it.
 *
 * @module
 */
import { ErrorCode } from "../spec/codes.ts";

/** A JSON-RPC response object. */
export type Response =
  | { jsonrpc: "2.0"; id: unknown; result: unknown }
  | { jsonrpc: "2.0"; id: unknown; error: { code: number; message: string; data?: unknown } };

/** A validated request, ready to run. */
export interface Request {
  id: unknown;
  method: string;
  params: unknown;
  notification: boolean;
}

/** Checks the JSON-RPC envelope; returns an error response when it is bad. */
export function parseEnvelope(value: unknown): Request | Response {
  const bad = (message: string, id: unknown = null): Response => ({
    jsonrpc: "2.0",
    id,
    error: { code: ErrorCode.InvalidRequest, message },
  });
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return bad("Invalid request: expected a JSON-RPC 2.0 object");
  }
  const v = value as Record<string, unknown>;
  const id = v.id;
  const idOk = id === undefined || id === null || typeof id === "string" ||
    (typeof id === "number" && Number.isFinite(id));
  if (!idOk) return bad(`Invalid request: "id" must be a string, number or null`);
  if (v.jsonrpc !== "2.0") return bad(`Invalid request: "jsonrpc" must be "2.0"`, id ?? null);
  if (typeof v.method !== "string" || !v.method) {
    return bad(`Invalid request: "method" must be a non-empty string`, id ?? null);
  }
  if (v.params !== undefined && v.params !== null && typeof v.params !== "object") {
    return bad(`Invalid request: "params" must be an object`, id ?? null);
  }
  return { id: id ?? null, method: v.method, params: v.params ?? {}, notification: id === undefined };
}
