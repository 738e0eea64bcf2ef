/**
 * `paneflow budget`: set or raise what a pane's agent (or its workspace) may
 * spend (docs/usage.md).
 *
 * @module
 */
import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { UsageError } from "../errors.ts";
import { defineVerb, printJson } from "./_verb.ts";
import { dollars } from "./usage.ts";

/** The `usage.budget` params the options ask for (without the pane); pure. */
export function budgetParams(opts: {
  usd?: number;
  tokens?: number;
  add?: number;
  per?: string;
  hard?: boolean;
}): { usd?: number; tokens?: number; add_usd?: number; per?: "pane" | "workspace"; hard?: boolean } {
  const out: ReturnType<typeof budgetParams> = {};
  for (const k of ["usd", "tokens", "add"] as const) {
    const v = opts[k];
    if (v === undefined) continue;
    if (!(v > 0) || (k === "tokens" && !Number.isInteger(v))) {
      throw new UsageError(
        `budget: "--${k}" must be a positive ${k === "tokens" ? "integer" : "number"}, not "${v}"`,
      );
    }
  }
  if (opts.usd === undefined && opts.tokens === undefined && opts.add === undefined) {
    throw new UsageError('budget: give "--usd", "--tokens" or "--add"');
  }
  if (opts.usd !== undefined && opts.add !== undefined) {
    throw new UsageError('budget: "--usd" sets the limit and "--add" raises it: give one');
  }
  if (opts.per !== undefined && opts.per !== "pane" && opts.per !== "workspace") {
    throw new UsageError(`budget: "--per" is "pane" or "workspace", not "${opts.per}"`);
  }
  if (opts.usd !== undefined) out.usd = opts.usd;
  if (opts.tokens !== undefined) out.tokens = opts.tokens;
  if (opts.add !== undefined) out.add_usd = opts.add;
  if (opts.per !== undefined) out.per = opts.per as "pane" | "workspace";
  if (opts.hard) out.hard = true;
  return out;
}

export default defineVerb({
  name: "budget",
  usage: "paneflow budget <target> (--usd N | --add N | --tokens N) [--per pane|workspace] [--hard] [--json]",
  options: {
    usd: { type: "number", value: "<usd>", description: "Set the limit in US dollars" },
    tokens: { type: "number", value: "<n>", description: "Set the limit in tokens" },
    add: { type: "number", value: "<usd>", description: "Raise the dollar limit by this much" },
    per: { type: "string", value: "<per>", description: "Count the pane (default) or its whole workspace" },
    hard: {
      type: "boolean",
      description: "Interrupt the agent at once when it is spent (default: after its turn)",
    },
    json: { type: "boolean", description: "Print the usage.budget result as JSON" },
  },
  positionals: [{ name: "target" }],
  run({ opts, args }) {
    const params = budgetParams(opts);
    return withClient(async (client) => {
      const surface_id = await resolveOne(client, args[0]);
      const b = await client.call("usage.budget", { surface_id, ...params });
      if (opts.json) {
        printJson(b);
        return 0;
      }
      const limit = [b.usd !== null ? dollars(b.usd) : "", b.tokens !== null ? `${b.tokens} tokens` : ""]
        .filter(Boolean).join(" or ");
      const state = b.over ? "spent: submits are refused" : "open";
      console.log(
        `Budget of ${b.target}: ${limit}${b.hard ? " (hard)" : ""}; ${dollars(b.spent_usd)} and ` +
          `${b.spent_tokens} tokens spent; ${state}`,
      );
      return 0;
    });
  },
});
