/**
 * ptywright's `server.*` family: protocol metadata and per-connection
 * notification settings.
 *
 * @module
 */
import { VERSION } from "../../spec/codes.ts";
import { PROTOCOL_NAME, PW_METHODS, PW_NOTIFICATIONS } from "../../spec/ptywright.ts";
import { notificationsOf, type PwHandlers } from "./_ptywright.ts";

/** Methods other families (plugins: `adapter.*`, `plugin.*`) add to `server.capabilities`. */
export const extraPtywrightMethods: string[] = [];

export const serverMethods: PwHandlers<"server.capabilities" | "server.set_notifications"> = {
  "server.capabilities": () => ({
    name: PROTOCOL_NAME,
    version: VERSION,
    server: "paneflow",
    framing: ["ndjson", "lsp"],
    methods: [...PW_METHODS, ...extraPtywrightMethods],
    notifications: [...PW_NOTIFICATIONS],
  }),
  "server.set_notifications": (ctx, p, conn) => notificationsOf(ctx, conn).set(p),
};
