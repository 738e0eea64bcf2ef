/**
 * The ledger: what every pane's agent spent, message by message, keyed so a
 * record seen twice counts once, and the sums `usage.get` answers. Pure data
 * and arithmetic; the service reads the files and keeps it on disk.
 *
 * @module
 */
import { costOf, type Price, type Tokens } from "./prices.ts";
import type { MessageRecord, ParseState, SourceKind, UsageRecord } from "./records.ts";

/** A pane as the ledger remembers it (it outlives the pane and the host). */
export interface PaneInfo {
  /** `<host run>:<surface id>`: unique across host restarts. */
  key: string;
  surface_id: number;
  name: string | null;
  workspace: string;
  agent: string;
}

/** One model request, as counted. */
export interface Entry {
  pane: string;
  at: number;
  model: string;
  tokens: Tokens;
  agent_cost_usd?: number;
}

/** A log file being followed. */
export interface Source {
  kind: SourceKind;
  pane: string;
  offset: number;
  state: ParseState;
}

/** Everything the ledger keeps on disk. */
export interface LedgerData {
  version: 1;
  panes: Record<string, PaneInfo>;
  messages: Record<string, Entry>;
  turns: Record<string, { pane: string; at: number }>;
  sources: Record<string, Source>;
  /** By target: `pane:<pane key>` or `workspace:<title>`. */
  budgets?: Record<string, Budget>;
}

/** A budget and what has been said about it. */
export interface Budget {
  usd?: number;
  tokens?: number;
  per: "pane" | "workspace";
  hard: boolean;
  /** `budget_warning` was published (80 %). */
  warned?: boolean;
  /** `budget_exceeded` was published (100 %). */
  exceeded?: boolean;
}

/** An empty ledger. */
export function emptyLedger(): LedgerData {
  return { version: 1, panes: {}, messages: {}, turns: {}, sources: {} };
}

/** Adds records for `pane`; returns whether anything changed. */
export function addRecords(data: LedgerData, pane: string, records: UsageRecord[]): boolean {
  let changed = false;
  for (const r of records) {
    if (r.kind === "turn") {
      if (!data.turns[r.key]) {
        data.turns[r.key] = { pane, at: r.at };
        changed = true;
      }
      continue;
    }
    changed = mergeMessage(data, pane, r) || changed;
  }
  return changed;
}

/** A message's lines repeat its usage (one line per content block): keep the largest counts. */
function mergeMessage(data: LedgerData, pane: string, r: MessageRecord): boolean {
  const old = data.messages[r.key];
  if (!old) {
    data.messages[r.key] = { pane, at: r.at, model: r.model, tokens: { ...r.tokens } };
    if (r.agent_cost_usd !== undefined) data.messages[r.key].agent_cost_usd = r.agent_cost_usd;
    return true;
  }
  let changed = false;
  for (const k of ["input", "output", "cache_read", "cache_write"] as const) {
    if (r.tokens[k] > old.tokens[k]) {
      old.tokens[k] = r.tokens[k];
      changed = true;
    }
  }
  return changed;
}

/** Token counts, cost and turns. */
export interface Totals {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  total_tokens: number;
  cost_usd: number;
  cost_source: "prices" | "agent" | "mixed" | "none";
  unpriced_tokens: number;
  turns: number;
  messages: number;
}

/** Zero of everything. */
export function zeroTotals(): Totals {
  return {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    total_tokens: 0,
    cost_usd: 0,
    cost_source: "none",
    unpriced_tokens: 0,
    turns: 0,
    messages: 0,
  };
}

/** Adds one entry to `t` (prices from `prices`, or the agent's own figure). */
export function addEntry(t: Totals, e: Entry, prices?: Readonly<Record<string, Price>>): void {
  const n = e.tokens.input + e.tokens.output + e.tokens.cache_read + e.tokens.cache_write;
  t.input_tokens += e.tokens.input;
  t.output_tokens += e.tokens.output;
  t.cache_read_tokens += e.tokens.cache_read;
  t.cache_write_tokens += e.tokens.cache_write;
  t.total_tokens += n;
  t.messages++;
  let source: "prices" | "agent" | null = null;
  if (e.agent_cost_usd !== undefined) {
    t.cost_usd += e.agent_cost_usd;
    source = "agent";
  } else {
    const c = costOf(e.model, e.tokens, prices);
    if (c === null) t.unpriced_tokens += n;
    else {
      t.cost_usd += c;
      source = "prices";
    }
  }
  if (source) t.cost_source = t.cost_source === "none" || t.cost_source === source ? source : "mixed";
}

/** Rounds the cost to a millionth of a dollar (sums of floats otherwise show noise). */
export function rounded(t: Totals): Totals {
  return { ...t, cost_usd: Math.round(t.cost_usd * 1e6) / 1e6 };
}

/** The group key of an entry's pane. */
export type GroupBy = "pane" | "workspace" | "agent" | "model";

/** Sums of the ledger, in total and by `by`, of what happened at or after `since`. */
export function summarize(
  data: LedgerData,
  opts: {
    by: GroupBy;
    since?: number;
    pane?: (p: PaneInfo) => boolean;
    prices?: Readonly<Record<string, Price>>;
  },
): { total: Totals; groups: Map<string, { totals: Totals; panes: Set<string>; models: Set<string> }> } {
  const since = opts.since ?? 0;
  const total = zeroTotals();
  const groups = new Map<string, { totals: Totals; panes: Set<string>; models: Set<string> }>();
  const keep = (paneKey: string) => {
    const p = data.panes[paneKey];
    return p && (!opts.pane || opts.pane(p)) ? p : null;
  };
  const group = (p: PaneInfo, model: string | null) => {
    const key = opts.by === "pane"
      ? p.key
      : opts.by === "workspace"
      ? p.workspace
      : opts.by === "agent"
      ? p.agent
      : model ?? "";
    let g = groups.get(key);
    if (!g) groups.set(key, g = { totals: zeroTotals(), panes: new Set(), models: new Set() });
    g.panes.add(p.key);
    if (model) g.models.add(model);
    return g;
  };
  for (const e of Object.values(data.messages)) {
    const p = e.at >= since ? keep(e.pane) : null;
    if (!p) continue;
    addEntry(total, e, opts.prices);
    addEntry(group(p, e.model).totals, e, opts.prices);
  }
  for (const turn of Object.values(data.turns)) {
    const p = turn.at >= since ? keep(turn.pane) : null;
    if (!p) continue;
    total.turns++;
    // A turn has no model: in a by-model view it counts once, in the group of its pane's last model.
    if (opts.by !== "model") group(p, null).totals.turns++;
  }
  return { total, groups };
}
