/**
 * Fleet methods: the agents across every pane.
 *
 * @module
 */
import type { FamilyHandlers } from "./_types.ts";
import { describeGrants } from "../../caps/service.ts";

/** The `fleet.*` handlers. */
export const fleet: FamilyHandlers<"fleet"> = {
  "fleet.list": async ({ registry, agents, usage, caps }) => {
    await agents.detectUntracked(registry.surfaces.values(), true);
    return {
      agents: agents.fleet().map((a) => {
        const spent = usage.paneTotals(a.surface_id);
        const s = registry.surfaces.get(a.surface_id);
        return {
          ...a,
          cost_usd: spent?.cost_usd ?? null,
          total_tokens: spent?.total_tokens ?? null,
          ...(s ? { caps: describeGrants(caps.paneGrants(s)) } : {}),
        };
      }),
    };
  },
};
