/**
 * Fleet methods: the agents across every pane.
 *
 * @module
 */
import type { FamilyHandlers } from "./_types.ts";

/** The `fleet.*` handlers. */
export const fleet: FamilyHandlers<"fleet"> = {
  "fleet.list": async ({ registry, agents }) => {
    await agents.detectUntracked(registry.surfaces.values(), true);
    return { agents: agents.fleet() };
  },
};
