/**
 * The errors the plugin host raises, with ptywright's codes (the table is
 * src/spec/ptywright.ts's `PwError`: the `adapter.*` / `plugin.*` surface's
 * own, where -32001 is a matcher timeout, not paneflow's gate), and the
 * failure of a plugin's code.
 *
 * @module
 */
import { RpcError } from "../errors.ts";
import { PwError } from "../spec/ptywright.ts";

/** -32602: a bad or unknown id, plugin or parameter. */
export const invalidParams = (message: string): RpcError => new RpcError(PwError.InvalidParams, message);
/** -32603: Lua, config, spawn and IO failures. */
export const internal = (message: string): RpcError => new RpcError(PwError.Internal, message);

/** -32004 for an adapter method the plugin's manifest does not permit. */
export function permissionDenied(method: string, permission: string): RpcError {
  return new RpcError(
    PwError.PermissionDenied,
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
    PwError.PermissionDenied,
    `method \`${method}\` is disabled; restart paneflow serve with --allow-plugin-load`,
    { method, reason: "server_did_not_grant_plugin_load" },
  );
}

/** A plugin's code failed (Lua error, budget, bad return value). */
export class PluginFailure extends Error {
  override name = "PluginFailure";
}
