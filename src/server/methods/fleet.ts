/**
 * Fleet methods: the agents across every pane.
 *
 * @module
 */
import type { FamilyHandlers } from "./_types.ts";
import { describeGrants } from "../../caps/service.ts";

/** The `fleet.*` handlers. */
export const fleet: FamilyHandlers<"fleet"> = {
  "fleet.list": async ({ registry, agents, caps }) => {
    await agents.detectUntracked(registry.surfaces.values(), true);
    return {
      agents: agents.fleet().map((a) => {
        const s = registry.surfaces.get(a.surface_id);
        return s ? { ...a, caps: describeGrants(caps.paneGrants(s)) } : a;
      }),
    };
  },
};
