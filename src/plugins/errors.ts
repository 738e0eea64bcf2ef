/**
 * ptywright's error codes and the errors the plugin host raises with them
 * (ptywright-api.md §5). These codes are the `adapter.*` / `plugin.*`
 * surface's own: -32001 there is a matcher timeout, not paneflow's gate.
 *
 * @module
 */
import { RpcError } from "../errors.ts";

/** ptywright JSON-RPC error codes. */
export const PtyCode = {
  InvalidParams: -32602,
  Internal: -32603,
  Timeout: -32001,
  Closed: -32002,
  PermissionDenied: -32004,
  Cancelled: -32005,
} as const;

/** -32602: a bad or unknown id, plugin or parameter. */
export const invalidParams = (message: string): RpcError => new RpcError(PtyCode.InvalidParams, message);
/** -32603: Lua, config, spawn and IO failures. */
export const internal = (message: string): RpcError => new RpcError(PtyCode.Internal, message);

/** -32004 for an adapter method the plugin's manifest does not permit. */
export function permissionDenied(method: string, permission: string): RpcError {
  return new RpcError(
    PtyCode.PermissionDenied,
    `method \`${method}\` requires permission \`${permission}\``,
    {
      method,
      required_permission: permission,
    },
  );
}

/** -32004 for plugin.load / plugin.unload on a host started without --allow-plugin-load. */
export function pluginLoadDenied(method: string): RpcError {
  return new RpcError(
    PtyCode.PermissionDenied,
    `method \`${method}\` is disabled; restart paneflow serve with --allow-plugin-load`,
    { method, reason: "server_did_not_grant_plugin_load" },
  );
}

/** A plugin's code failed (Lua error, budget, bad return value). */
export class PluginFailure extends Error {
  override name = "PluginFailure";
}
