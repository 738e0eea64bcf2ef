/**
 * Adapter wait matchers: the tree a plugin's `*_matcher` function returns,
 * evaluated against an adapter's screen and transcript with ptywright's
 * structured outcome (`matched` on `adapter.wait`), including the `lua`
 * predicate matcher, which calls into the plugin registry.
 *
 * @module
 */
import { z } from "zod";

/** A matcher tree (ptywright's, https://github.com/utensils/ptywright/blob/main/src/matcher.rs). */
export type Matcher =
  | { type: "contains_text" | "transcript_contains" | "screen_regex" | "transcript_regex"; value: string }
  | { type: "cursor_at"; value: { row: number; col: number } }
  | { type: "screen_stable"; value: { min_ms: number } }
  | { type: "process_exited" }
  | { type: "any" | "all"; value: Matcher[] }
  | { type: "lua"; value: { plugin: string; predicate: string; params?: unknown } };

/** The structured outcome of a matcher that fired. */
export type MatchOutcome =
  | { kind: "contains_text" | "transcript_contains"; text: string }
  | { kind: "screen_regex" | "transcript_regex"; pattern: string; capture: string }
  | { kind: "cursor_at"; row: number; col: number }
  | { kind: "screen_stable"; min_ms: number }
  | { kind: "process_exited" }
  | { kind: "any"; matched: MatchOutcome }
  | { kind: "all"; matched: MatchOutcome[] }
  | { kind: "lua"; plugin: string; predicate: string; evidence?: unknown; capture?: unknown };

const MAX_DEPTH = 64;
const MAX_NODES = 1024;

const MatcherSchema: z.ZodType<Matcher> = z.lazy(() =>
  z.union([
    z.object({
      type: z.enum(["contains_text", "transcript_contains", "screen_regex", "transcript_regex"]),
      value: z.string(),
    }),
    z.object({ type: z.literal("cursor_at"), value: z.object({ row: z.number(), col: z.number() }) }),
    z.object({ type: z.literal("screen_stable"), value: z.object({ min_ms: z.number().min(0) }) }),
    z.object({ type: z.literal("process_exited") }),
    z.object({ type: z.enum(["any", "all"]), value: z.array(MatcherSchema) }),
    z.object({
      type: z.literal("lua"),
      value: z.object({ plugin: z.string(), predicate: z.string(), params: z.unknown().optional() }),
    }),
  ])
);

/** Validates a matcher tree a plugin returned (Lua turns `[]` into `{}`; that is accepted). */
export function parseMatcher(raw: unknown): Matcher {
  // Bounded before zod walks it recursively (ptywright-family limits).
  const stack: { v: unknown; depth: number }[] = [{ v: raw, depth: 1 }];
  let nodes = 0;
  while (stack.length) {
    const { v, depth } = stack.pop()!;
    if (depth > MAX_DEPTH) throw new Error(`the tree is nested more than ${MAX_DEPTH} levels deep`);
    if (++nodes > MAX_NODES) throw new Error(`the tree has more than ${MAX_NODES} matchers`);
    const o = v as { type?: unknown; value?: unknown } | null;
    if (o && (o.type === "any" || o.type === "all") && o.value && typeof o.value === "object") {
      for (const c of Object.values(o.value)) stack.push({ v: c, depth: depth + 1 });
    }
  }
  const fix = (v: unknown): unknown => {
    if (!v || typeof v !== "object") return v;
    const o = v as Record<string, unknown>;
    if ((o.type === "any" || o.type === "all") && o.value && !Array.isArray(o.value)) {
      return { ...o, value: Object.values(o.value as object).map(fix) };
    }
    if (Array.isArray(o.value)) return { ...o, value: o.value.map(fix) };
    return o;
  };
  const r = MatcherSchema.safeParse(fix(raw));
  if (!r.success) throw new Error(`the plugin returned an invalid matcher: ${r.error.issues[0]?.message}`);
  return r.data;
}

/** Whether an unvalidated tree holds a `lua` node (bounded walk). */
export function hasLua(raw: unknown): boolean {
  const stack: unknown[] = [raw];
  for (let n = 0; stack.length && n < 4096; n++) {
    const v = stack.pop();
    if (!v || typeof v !== "object") continue;
    const o = v as Record<string, unknown>;
    if (o.type === "lua") return true;
    if ((o.type === "any" || o.type === "all") && Array.isArray(o.value)) stack.push(...o.value);
  }
  return false;
}

/** Whether the tree waits on stability (a program that exited can still satisfy it). */
export function hasStable(m: Matcher): boolean {
  if (m.type === "screen_stable") return true;
  if (m.type === "any" || m.type === "all") return m.value.some(hasStable);
  return false;
}

/** What a matcher looks at. */
export interface MatchInput {
  screen: string;
  transcript: string;
  cursor: { row: number; col: number };
  stableMs: number;
  exited: boolean;
  /** Runs a `lua` predicate; returns its outcome or null. */
  predicate: (plugin: string, predicate: string, params: unknown) => MatchOutcome | null;
}

const regexCache = new Map<string, RegExp | null>();

/**
 * Compiles a Rust-regex pattern as a JS RegExp: leading inline flags
 * (`(?m)`, `(?i)`, `(?s)`, `(?x)` is not supported) become RegExp flags.
 * An invalid pattern never matches.
 */
export function compile(pattern: string): RegExp | null {
  if (regexCache.has(pattern)) return regexCache.get(pattern)!;
  let flags = "u";
  let src = pattern;
  const m = /^\(\?([ims]+)\)/.exec(src);
  if (m) {
    src = src.slice(m[0].length);
    for (const f of new Set(m[1])) flags += f;
  }
  let re: RegExp | null;
  try {
    re = new RegExp(src, flags);
  } catch {
    re = null;
  }
  if (regexCache.size > 512) regexCache.clear();
  regexCache.set(pattern, re);
  return re;
}

/** Evaluates a matcher; the outcome when it fires, else null. */
export function evaluate(m: Matcher, input: MatchInput): MatchOutcome | null {
  switch (m.type) {
    case "contains_text":
      return input.screen.includes(m.value) ? { kind: m.type, text: m.value } : null;
    case "transcript_contains":
      return input.transcript.includes(m.value) ? { kind: m.type, text: m.value } : null;
    case "screen_regex":
    case "transcript_regex": {
      const re = compile(m.value);
      const hit = re?.exec(m.type === "screen_regex" ? input.screen : input.transcript);
      return hit ? { kind: m.type, pattern: m.value, capture: hit[1] ?? hit[0] } : null;
    }
    case "cursor_at":
      return input.cursor.row === m.value.row && input.cursor.col === m.value.col
        ? { kind: "cursor_at", row: m.value.row, col: m.value.col }
        : null;
    case "screen_stable":
      return input.stableMs >= m.value.min_ms ? { kind: "screen_stable", min_ms: m.value.min_ms } : null;
    case "process_exited":
      return input.exited ? { kind: "process_exited" } : null;
    case "any":
      for (const c of m.value) {
        const hit = evaluate(c, input);
        if (hit) return { kind: "any", matched: hit };
      }
      return null;
    case "all": {
      const hits: MatchOutcome[] = [];
      for (const c of m.value) {
        const hit = evaluate(c, input);
        if (!hit) return null;
        hits.push(hit);
      }
      return { kind: "all", matched: hits };
    }
    case "lua":
      return input.predicate(m.value.plugin, m.value.predicate, m.value.params ?? {});
  }
}
