/**
 * The shapes that cross between the host and a plugin (ptywright's,
 * https://github.com/utensils/ptywright/blob/main/website/reference/plugins.md):
 * the classify context, the state snapshot, action plans.
 *
 * @module
 */

/** What `classify(ctx)` receives. */
export interface ClassifyContext {
  screen: string;
  body_text: string;
  status_text: string;
  transcript: string;
  sequence: number;
  last_intent?: string;
  stable_ms?: number;
  completed_turn_stable_ms: number;
  markers: Record<string, number>;
  cursor: number;
  last_event_seq?: number;
}

/** A classified state (ExtensionStateSnapshot). */
export interface StateSnapshot {
  state: string;
  confidence: number;
  evidence: string;
  sequence: number;
  candidates: unknown[];
  metadata?: Record<string, unknown>;
  host_marks?: { label: string }[];
  events?: Record<string, unknown>[];
}

/** One action of a plan (the tagged wire form). */
export type PlanAction = { type: string; value?: unknown };

/** What an intent function returns. */
export interface ActionPlan {
  actions: PlanAction[];
  /** Absent: keep the recorded intent; "": clear it; else record it. */
  last_intent?: string;
}

/** `completed_turn_stable_ms` for adapters (ADAPTER_COMPLETED_TURN_STABLE_MS). */
export const COMPLETED_TURN_STABLE_MS = 300;

/**
 * Splits a screen into body and status the way ptywright does: the bottom
 * three lines are the status bar when there are more than six lines.
 */
export function splitStatusBar(screen: string): { body: string; status: string } {
  const lines = screen.split("\n");
  if (lines.at(-1) === "") lines.pop();
  if (lines.length <= 6) return { body: lines.join("\n"), status: "" };
  return { body: lines.slice(0, -3).join("\n"), status: lines.slice(-3).join("\n") };
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);
/** Lua gives `{}` for an empty list. */
export const asList = (v: unknown): unknown[] => Array.isArray(v) ? v : isObj(v) ? Object.values(v) : [];

/** Normalizes what `classify` returned; throws when it is not a state. */
export function toState(raw: unknown, sequence: number): StateSnapshot {
  if (!isObj(raw) || typeof raw.state !== "string") {
    throw new Error("classify must return a table with a string `state`");
  }
  if (typeof raw.sequence !== "number") throw new Error("classify must return a numeric `sequence`");
  const conf = typeof raw.confidence === "number" ? Math.round(raw.confidence * 1000) / 1000 : 0;
  const out: StateSnapshot = {
    state: raw.state,
    confidence: conf,
    evidence: typeof raw.evidence === "string" ? raw.evidence : "",
    sequence: raw.sequence ?? sequence,
    candidates: asList(raw.candidates),
  };
  if (isObj(raw.metadata) && Object.keys(raw.metadata).length) out.metadata = raw.metadata;
  const marks = asList(raw.host_marks).filter((m): m is { label: string } =>
    isObj(m) && typeof m.label === "string"
  );
  if (marks.length) out.host_marks = marks.map((m) => ({ label: m.label }));
  const events = asList(raw.events).filter(isObj);
  if (events.length) out.events = events;
  return out;
}

/** The state the host reports when classify itself fails. */
export function pluginError(err: unknown, sequence: number): StateSnapshot {
  return {
    state: "plugin_error",
    confidence: 0,
    evidence: `plugin failed: ${err instanceof Error ? err.message : String(err)}`,
    sequence,
    candidates: [],
  };
}

/** Normalizes what an intent returned. */
export function toPlan(raw: unknown): ActionPlan {
  if (!isObj(raw)) throw new Error("an intent must return an action plan table");
  const actions = asList(raw.actions).map((a) => {
    if (!isObj(a) || typeof a.type !== "string") throw new Error("every action needs a string `type`");
    return a as PlanAction;
  });
  const plan: ActionPlan = { actions };
  if (typeof raw.last_intent === "string") plan.last_intent = raw.last_intent;
  return plan;
}

/** Limits every call into plugin code runs under. */
export interface Budget {
  /** Lua VM instructions per call (ptywright: 5,000,000). */
  instructions: number;
  /** Wall-clock milliseconds per call (ptywright: 5000). */
  wallMs: number;
  /** Bytes the VM may allocate in all. */
  memoryBytes: number;
}

/** ptywright's limits. */
export const DEFAULT_BUDGET: Budget = {
  instructions: 5_000_000,
  wallMs: 5000,
  memoryBytes: 64 * 1024 * 1024,
};

/** A loaded plugin's code: a table of exported functions taking and returning JSON-like values. */
export interface PluginRuntime {
  /** Names of the exported functions, sorted. */
  readonly exports: string[];
  /** Calls an export with one argument; throws {@link PluginFailure} on any failure. */
  call(fn: string, arg: unknown): unknown;
  /** Frees the VM. */
  close(): void;
}
