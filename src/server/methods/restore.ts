/**
 * Restore methods: the last host's workspaces back (src/restore/, docs/restore.md).
 *
 * @module
 */
import type { FamilyHandlers } from "./_types.ts";

/** The `restore.*` handlers. */
export const restore: FamilyHandlers<"restore"> = {
  "restore.plan": (ctx, p) => ctx.restore.plan(p.workspaces ?? []),
  "restore.run": (ctx, p) => ctx.restore.run(p.workspaces ?? []),
};
