/**
 * Usage methods: what the panes' agents spent (src/usage/).
 *
 * @module
 */
import type { FamilyHandlers } from "./_types.ts";

/** The `usage.*` handlers. */
export const usage: FamilyHandlers<"usage"> = {
  "usage.get": ({ usage }, p) => usage.get({ by: p.by, since: p.since, surfaceId: p.surface_id }),
  "usage.budget": ({ usage, registry }, p) => usage.setBudget(registry.surface(p.surface_id), p),
};
