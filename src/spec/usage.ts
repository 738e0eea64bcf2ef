/**
 * Usage: what each agent spends. The config's `usage` key (prices, where the ledger is kept),
 * the `usage.get` params, its result and the `usage_changed` event.
 *
 * @module
 */
import { z } from "zod";

/** A model's prices in US dollars per million tokens, by kind. */
export const ModelPrice = z.strictObject({
  input: z.number().min(0),
  output: z.number().min(0),
  cache_read: z.number().min(0).optional().describe("Default: input"),
  cache_write: z.number().min(0).optional().describe("Default: input"),
});

/** A spending limit: `usd` or `tokens` (or both), per pane or per workspace. */
export const BudgetSpec = z.strictObject({
  usd: z.number().positive().optional(),
  tokens: z.number().int().positive().optional(),
  per: z.enum(["pane", "workspace"]).default("pane"),
  hard: z.boolean().default(false).describe("Interrupt the agent at once instead of at the end of its turn"),
});

/** The config's `usage` key. */
export const UsageConfig = z.strictObject({
  prices: z.record(z.string().min(1), ModelPrice).default({})
    .describe("Model name prefix -> prices per million tokens; overrides the shipped table"),
  budget: BudgetSpec.optional().describe("The budget every agent pane starts with"),
  state_dir: z.string().min(1).optional()
    .describe("Where the ledger is kept (default $XDG_STATE_HOME/paneflow/<socket>)"),
}).prefault({});

/** How `usage.get` groups. */
export const UsageBy = z.enum(["pane", "workspace", "agent", "model"]);

/** Params of `usage.get`. */
export const UsageGetParams = z.strictObject({
  by: UsageBy.optional().describe("Group the ledger (default pane)"),
  since: z.number().int().min(0).optional().describe(
    "Only what was spent since this time (ms since the epoch)",
  ),
  surface_id: z.number().int().positive().optional().describe("Only this pane"),
});

/** Params of `usage.budget`. */
export const UsageBudgetParams = z.strictObject({
  surface_id: z.number().int().positive(),
  usd: z.number().positive().optional().describe("Set the dollar limit"),
  tokens: z.number().int().positive().optional().describe("Set the token limit"),
  add_usd: z.number().positive().optional().describe("Raise the dollar limit by this much"),
  per: z.enum(["pane", "workspace"]).optional(),
  hard: z.boolean().optional(),
});

/** Result of `usage.budget`: the budget now and what it counts. */
export const UsageBudgetResult = z.object({
  target: z.string().describe('"pane <id>" or "workspace <title>"'),
  usd: z.number().nullable(),
  tokens: z.number().int().nullable(),
  per: z.enum(["pane", "workspace"]),
  hard: z.boolean(),
  spent_usd: z.number(),
  spent_tokens: z.number().int(),
  over: z.boolean(),
});

/** Token counts, cost and turns of a part of the ledger. */
export const UsageTotals = z.object({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cache_read_tokens: z.number().int(),
  cache_write_tokens: z.number().int(),
  total_tokens: z.number().int(),
  cost_usd: z.number(),
  cost_source: z.enum(["prices", "agent", "mixed", "none"])
    .describe("Where the cost came from: the price table, the agent's own figure, both"),
  unpriced_tokens: z.number().int().describe("Tokens of models the price table does not know"),
  turns: z.number().int(),
  messages: z.number().int(),
});

/** One group of `usage.get`. */
export const UsageGroup = UsageTotals.extend({
  key: z.string(),
  surface_id: z.number().int().optional(),
  name: z.string().nullable().optional(),
  workspace: z.string().optional(),
  agent: z.string().optional(),
  models: z.array(z.string()).optional(),
  live: z.boolean().optional().describe("The pane is open on this host"),
});

/** Result of `usage.get`. */
export const UsageResult = z.object({
  by: UsageBy,
  since: z.number().int().nullable(),
  total: UsageTotals,
  groups: z.array(UsageGroup),
});

/** What `fleet.list` adds to each agent: its pane's spend (`ps`'s COST column). */
export const FleetSpend = {
  cost_usd: z.number().nullable().describe(
    "What the pane's agent spent (docs/usage.md); null: nothing recorded",
  ),
  total_tokens: z.number().int().nullable(),
};

/** A budget event's fields. */
export const BudgetEvent = {
  surface_id: z.number().int().min(1),
  target: z.string(),
  usd: z.number().nullable(),
  tokens: z.number().int().nullable(),
  spent_usd: z.number(),
  spent_tokens: z.number().int(),
};
