/**
 * Notification methods: rules and sinks, a test, the web view's public URL,
 * reply links (src/notify/, docs/notify.md).
 *
 * @module
 */
import type { FamilyHandlers } from "./_types.ts";

/** The `notify.*` handlers. */
export const notify: FamilyHandlers<"notify"> = {
  "notify.ls": (ctx) => ctx.notify.list(),
  "notify.test": (ctx, p) => ctx.notify.test(p.sink),
  "notify.web": (ctx, p) => ctx.notify.setPublicUrl(p.public_url, p.explicit),
  "notify.reply": (ctx, p) => ctx.notify.reply(p),
};
