/**
 * Matcher trees of `session.wait` (docs/ptywright.md): validation on the main thread
 * (iterative, so a tree 10,000 levels deep is a clear -32602, not a stack
 * overflow; regexes compiled on the bounded-cost engine) and evaluation in
 * the pane worker against the parsed screen and the transcript.
 *
 * @module
 */
import { RpcError } from "../../errors.ts";
import { PwError, PwLimits } from "../../spec/ptywright.ts";
import { compileSafe, type SafeRegex } from "./regex.ts";

/** A validated matcher (plain data: it crosses to the worker). */
export type Matcher =
  | { type: "contains_text" | "transcript_contains" | "screen_regex" | "transcript_regex"; value: string }
  | { type: "cursor_at"; value: { row: number; col: number } }
  | { type: "screen_stable"; value: { min_ms: number } }
  | { type: "process_exited" }
  | { type: "any" | "all"; value: Matcher[] };

const TYPES = [
  "contains_text",
  "screen_regex",
  "transcript_contains",
  "transcript_regex",
  "cursor_at",
  "screen_stable",
  "process_exited",
  "any",
  "all",
  "lua",
];

function bad(path: string, message: string): RpcError {
  return new RpcError(PwError.InvalidParams, `invalid matcher at \`${path}\`: ${message}`);
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isUint = (v: unknown, max = 2 ** 31) =>
  typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= max;

/**
 * Checks a matcher tree without recursion; returns it as plain data.
 * Limits: {@link PwLimits.matcherDepth} levels, {@link PwLimits.matcherNodes} nodes.
 */
export function parseMatcher(raw: unknown): Matcher {
  let nodes = 0;
  const stack: { v: unknown; path: string; depth: number }[] = [{ v: raw, path: "matcher", depth: 1 }];
  while (stack.length) {
    const { v, path, depth } = stack.pop()!;
    if (depth > PwLimits.matcherDepth) {
      throw bad(path, `the tree is nested more than ${PwLimits.matcherDepth} levels deep`);
    }
    if (++nodes > PwLimits.matcherNodes) {
      throw bad(path, `the tree has more than ${PwLimits.matcherNodes} matchers`);
    }
    if (!isObject(v)) throw bad(path, "expected an object with a `type`");
    const type = v.type;
    if (typeof type !== "string" || !TYPES.includes(type)) {
      throw bad(
        path,
        `unknown variant ${JSON.stringify(type)}; expected one of ${TYPES.join(", ")}`,
      );
    }
    const value = v.value;
    switch (type) {
      case "contains_text":
      case "transcript_contains":
        if (typeof value !== "string") throw bad(`${path}.value`, "expected a string");
        if (value.length > PwLimits.inputMaxBytes) throw bad(`${path}.value`, "the text is too long");
        break;
      case "screen_regex":
      case "transcript_regex":
        if (typeof value !== "string") throw bad(`${path}.value`, "expected a regex string");
        try {
          compileSafe(value);
        } catch (e) {
          throw bad(`${path}.value`, `invalid regex \`${value.slice(0, 200)}\`: ${(e as Error).message}`);
        }
        break;
      case "cursor_at":
        if (!isObject(value) || !isUint(value.row, 65535) || !isUint(value.col, 65535)) {
          throw bad(`${path}.value`, "expected {row, col} with non-negative integers");
        }
        break;
      case "screen_stable":
        if (!isObject(value) || !isUint(value.min_ms, PwLimits.waitTimeoutMaxMs)) {
          throw bad(`${path}.value`, "expected {min_ms} with a non-negative integer");
        }
        break;
      case "process_exited":
        break;
      case "any":
      case "all":
        if (!Array.isArray(value)) throw bad(`${path}.value`, "expected an array of matchers");
        value.forEach((child, i) => stack.push({ v: child, path: `${path}.value[${i}]`, depth: depth + 1 }));
        break;
      case "lua":
        throw bad(
          path,
          "the `lua` matcher needs plugin support (plugin.* / adapter.*), which this host does not have yet",
        );
    }
  }
  return strip(raw) as Matcher;
}

/** A copy with only the fields a matcher uses (depth is already bounded). */
function strip(v: unknown): Matcher {
  const m = v as Record<string, unknown>;
  const type = m.type as Matcher["type"];
  if (type === "any" || type === "all") return { type, value: (m.value as unknown[]).map(strip) };
  if (type === "process_exited") return { type };
  if (type === "cursor_at") {
    const c = m.value as { row: number; col: number };
    return { type, value: { row: c.row, col: c.col } };
  }
  if (type === "screen_stable") return { type, value: { min_ms: (m.value as { min_ms: number }).min_ms } };
  return { type, value: m.value as string };
}

/** Whether the tree has a `screen_stable` (such a wait may still match after the exit). */
export function hasStable(m: Matcher): boolean {
  if (m.type === "screen_stable") return true;
  if (m.type === "any" || m.type === "all") return m.value.some(hasStable);
  return false;
}

/** Every `min_ms` of the tree's `screen_stable` matchers. */
export function stableDurations(m: Matcher, out: number[] = []): number[] {
  if (m.type === "screen_stable") out.push(m.value.min_ms);
  if (m.type === "any" || m.type === "all") { for (const c of m.value) stableDurations(c, out); }
  return out;
}

/** What a matcher sees; text is computed on demand and once per evaluation. */
export interface MatchInput {
  screen(): string;
  transcript(): string;
  cursor: { row: number; col: number };
  exited: boolean;
  /** How long the sequence has not changed (counted from the wait's start at most). */
  stableMs: number;
}

/** Evaluates a matcher; `regexes` caches compiled patterns per wait. */
export function evaluate(m: Matcher, input: MatchInput, regexes: Map<string, SafeRegex>): boolean {
  const re = (source: string) => {
    let r = regexes.get(source);
    if (!r) regexes.set(source, r = compileSafe(source));
    return r;
  };
  switch (m.type) {
    case "contains_text":
      return input.screen().includes(m.value);
    case "transcript_contains":
      return input.transcript().includes(m.value);
    case "screen_regex":
      return re(m.value).find(input.screen()) !== null;
    case "transcript_regex":
      return re(m.value).find(input.transcript()) !== null;
    case "cursor_at":
      return input.cursor.row === m.value.row && input.cursor.col === m.value.col;
    case "screen_stable":
      return input.stableMs >= m.value.min_ms;
    case "process_exited":
      return input.exited;
    case "any":
      return m.value.some((c) => evaluate(c, input, regexes));
    case "all":
      return m.value.every((c) => evaluate(c, input, regexes));
  }
}
