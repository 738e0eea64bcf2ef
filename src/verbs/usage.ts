/**
 * `paneflow usage`: what the panes' agents spent, from their own logs
 * (docs/usage.md).
 *
 * @module
 */
import { withClient } from "../client/client.ts";
import { UsageError } from "../errors.ts";
import type { Result } from "../spec/results.ts";
import { defineVerb, printJson, printTable } from "./_verb.ts";

const BY = ["pane", "workspace", "agent", "model"] as const;
type By = (typeof BY)[number];

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `--by` and `--since` (a duration back from `now` like `30m`, `2h`, `1d`, or a date); pure. */
export function usageOptions(
  opts: { by?: string; since?: string },
  now = Date.now(),
): { by: By; since?: number } {
  const by = (opts.by ?? "pane") as By;
  if (!BY.includes(by)) {
    throw new UsageError(
      `usage: "--by" must be one of ${BY.map((b) => `"${b}"`).join(", ")}, not "${opts.by}"`,
    );
  }
  if (opts.since === undefined) return { by };
  const m = /^(\d+(?:\.\d+)?)([smhd])$/.exec(opts.since);
  const since = m ? now - Number(m[1]) * UNITS[m[2]] : Date.parse(opts.since);
  if (!Number.isFinite(since) || since < 0) {
    throw new UsageError(`usage: "--since" takes a duration (30m, 2h, 1d) or a date, not "${opts.since}"`);
  }
  return { by, since: Math.floor(since) };
}

/** A dollar figure for the table: cents, or more digits below a cent. */
export function dollars(usd: number): string {
  return usd >= 0.01 || usd === 0 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

type Group = Result<"usage.get">["groups"][number];

function row(by: By, g: Group): (string | number | null)[] {
  const who = by === "pane"
    ? [g.surface_id ?? null, g.name ?? null, g.agent ?? null]
    : [g.key || "(unknown)"];
  const cost = `${dollars(g.cost_usd)}${
    g.cost_source === "agent" ? " (agent)" : g.unpriced_tokens ? " +?" : ""
  }`;
  return [
    ...who,
    g.turns,
    g.input_tokens,
    g.output_tokens,
    g.cache_read_tokens,
    g.cache_write_tokens,
    cost,
  ];
}

export default defineVerb({
  name: "usage",
  usage: "paneflow usage [--by pane|workspace|agent|model] [--since T] [--json]",
  options: {
    by: {
      type: "string",
      value: "<group>",
      description: "Group by pane (default), workspace, agent or model",
    },
    since: {
      type: "string",
      value: "<T>",
      description: "Only since T: a duration back (30m, 2h, 1d) or a date",
    },
    json: { type: "boolean", description: "Print the usage.get result as JSON" },
  },
  positionals: [],
  run({ opts }) {
    const { by, since } = usageOptions(opts);
    return withClient(async (client) => {
      const u = await client.call("usage.get", since === undefined ? { by } : { by, since });
      if (opts.json) {
        printJson(u);
        return 0;
      }
      if (!u.groups.length) {
        console.log("No usage recorded.");
        return 0;
      }
      const head = by === "pane" ? ["ID", "NAME", "AGENT"] : [by.toUpperCase()];
      printTable(
        [...head, "TURNS", "INPUT", "OUTPUT", "CACHE_READ", "CACHE_WRITE", "COST"],
        [
          ...u.groups.map((g) => row(by, g)),
          row(by, { ...u.total, key: "total", surface_id: undefined, name: "total", agent: "" }),
        ],
      );
      return 0;
    });
  },
});
