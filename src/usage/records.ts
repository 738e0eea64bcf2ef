/**
 * Usage records from the agents' own logs, one line at a time: Claude Code's
 * transcript (JSONL, an assistant entry per content block, each with its
 * message's `usage`; https://docs.anthropic.com/en/api/messages) and Codex's
 * session rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, whose
 * `token_count` events carry the last request's and the session's totals).
 * Each record has a key that is the same however often a line is read, so a
 * re-read never counts twice. Pure: no I/O.
 *
 * @module
 */
import type { Tokens } from "./prices.ts";

/** Which log format a source file has. */
export type SourceKind = "claude" | "codex";

/** What one model request spent. */
export interface MessageRecord {
  kind: "message";
  /** Stable across re-reads: the API's message id, or the session's running total. */
  key: string;
  at: number;
  model: string;
  tokens: Tokens;
  /** The agent's own figure, when it reports one. */
  agent_cost_usd?: number;
}

/** A user turn began. */
export interface TurnRecord {
  kind: "turn";
  key: string;
  at: number;
}

/** A record of a log line. */
export type UsageRecord = MessageRecord | TurnRecord;

/** What a parser remembers between lines of one file (persisted with the file's offset). */
export interface ParseState {
  /** Codex: the model of the current turn. */
  model?: string;
}

const int = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
const obj = (v: unknown) =>
  v && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : null;

function time(v: unknown): number {
  const t = typeof v === "string" ? Date.parse(v) : NaN;
  return Number.isFinite(t) ? t : Date.now();
}

/** The records of one line; `file` names the source (Codex's keys use it). */
export function parseLine(kind: SourceKind, line: string, state: ParseState, file: string): UsageRecord[] {
  let entry: Record<string, unknown> | null;
  try {
    entry = obj(JSON.parse(line));
  } catch {
    return [];
  }
  if (!entry) return [];
  return kind === "claude" ? claudeLine(entry) : codexLine(entry, state, file);
}

function claudeLine(e: Record<string, unknown>): UsageRecord[] {
  const msg = obj(e.message);
  if (!msg) return [];
  if (e.type === "assistant") {
    const usage = obj(msg.usage);
    const id = typeof msg.id === "string" ? msg.id : null;
    if (!usage || !id || msg.model === "<synthetic>") return [];
    return [{
      kind: "message",
      key: `claude:${id}`,
      at: time(e.timestamp),
      model: typeof msg.model === "string" ? msg.model : "unknown",
      tokens: {
        input: int(usage.input_tokens),
        output: int(usage.output_tokens),
        cache_read: int(usage.cache_read_input_tokens),
        cache_write: int(usage.cache_creation_input_tokens),
      },
    }];
  }
  if (e.type === "user" && !e.isMeta && !e.isCompactSummary && typeof e.uuid === "string") {
    const c = msg.content;
    const prompt = typeof c === "string" ||
      (Array.isArray(c) && c.length > 0 && c.every((b) => obj(b)?.type !== "tool_result"));
    if (prompt) return [{ kind: "turn", key: `claude-turn:${e.uuid}`, at: time(e.timestamp) }];
  }
  return [];
}

function codexLine(e: Record<string, unknown>, state: ParseState, file: string): UsageRecord[] {
  const p = obj(e.payload);
  if (!p) return [];
  const at = time(e.timestamp);
  if (e.type === "turn_context") {
    if (typeof p.model === "string") state.model = p.model;
    return [];
  }
  if (e.type !== "event_msg") return [];
  // Codex 0.169 marks each turn with task_started (the user's prompt alone is no longer an event).
  if (p.type === "task_started") {
    const id = typeof p.turn_id === "string" ? p.turn_id : String(at);
    return [{ kind: "turn", key: `codex-turn:${file}:${id}`, at }];
  }
  if (p.type !== "token_count") return [];
  const info = obj(p.info);
  const last = obj(info?.last_token_usage);
  const total = obj(info?.total_token_usage);
  if (!last || !total) return [];
  // The running total grows with every request and repeats when Codex re-sends the same counts.
  const cached = int(last.cached_input_tokens);
  return [{
    kind: "message",
    key: `codex:${file}:${int(total.total_tokens)}:${int(total.input_tokens)}:${int(total.output_tokens)}`,
    at,
    model: state.model ?? "unknown",
    tokens: {
      input: Math.max(0, int(last.input_tokens) - cached),
      output: int(last.output_tokens),
      cache_read: cached,
      cache_write: int(last.cache_write_input_tokens),
    },
  }];
}

/** Which format a log path has: Codex's rollouts are named `rollout-*.jsonl`. */
export function kindOfPath(path: string): SourceKind {
  return /(?:^|\/)rollout-[^/]*\.jsonl$/.test(path) ? "codex" : "claude";
}
