/**
 * Wording shared by the spec checkers (workspace and flow files): how a TOML
 * value is named, "did you mean" suggestions, and zod's schema problems in
 * our words.
 *
 * @module
 */
import type { z } from "zod";

/** How a TOML value reads in a message: `a string`, `an array`, ... */
export function kindOf(v: unknown): string {
  if (v === undefined) return "nothing";
  if (Array.isArray(v)) return "an array";
  if (v instanceof Date || (typeof v === "object" && v?.constructor?.name === "TomlDate")) return "a date";
  if (v === null || typeof v === "object") return "a table";
  if (typeof v === "number") return Number.isInteger(v) ? "an integer" : "a float";
  if (typeof v === "string") return "a string";
  if (typeof v === "boolean") return "a boolean";
  return typeof v;
}

/** The value at a key path of parsed TOML. */
export function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v = raw;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

/** Levenshtein distance. */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return d[a.length][b.length];
}

/** `; did you mean "x"?` for a close known key, or "". */
export function suggest(key: string, known: string[]): string {
  const close = known.find((k) => k.startsWith(key) || key.startsWith(k)) ??
    known.map((k) => [k, editDistance(key, k)] as const).filter(([, d]) => d <= 2).sort((x, y) =>
      x[1] - y[1]
    )[0]
      ?.[0];
  return close ? `; did you mean "${close}"?` : "";
}

/** zod's expected types in our words. */
export const EXPECTED: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean (true or false)",
  array: "an array",
  object: "a table",
  record: "a table",
};

/** What {@link zodIssues} needs to know about the spec it words. */
export interface SpecWords {
  /** The spec's required array of tables (`step`, `panes`), for "add at least one [[x]] table". */
  tables: string;
  /** The keys known where an unknown key was found (its table's key path), for "did you mean". */
  knownKeys(path: readonly PropertyKey[]): string[];
}

const DISPLAY_PATH = (path: readonly PropertyKey[]) =>
  path.map((p) => (typeof p === "symbol" ? String(p) : p));

/**
 * zod's schema problems with a TOML spec (`raw`), in our words: every one,
 * with its key path, the value found named by {@link kindOf}.
 */
export function zodIssues(
  raw: unknown,
  issues: readonly z.core.$ZodIssue[],
  words: SpecWords,
): { path: (string | number)[]; message: string }[] {
  const out: { path: (string | number)[]; message: string }[] = [];
  for (const issue of issues) {
    const path = DISPLAY_PATH(issue.path) as (string | number)[];
    if (issue.code === "unrecognized_keys") {
      const known = words.knownKeys(path);
      for (const k of issue.keys) {
        out.push({ path: [...path, k], message: `unknown key "${k}"${suggest(k, known)}` });
      }
    } else out.push({ path, message: issueMessage(issue, path, valueAt(raw, path), words.tables) });
  }
  return out;
}

/** One zod problem (other than unknown keys) about `value` at `path`, in our words. */
function issueMessage(
  issue: z.core.$ZodIssue,
  path: (string | number)[],
  value: unknown,
  tables: string,
): string {
  const inEnv = path[path.length - 2] === "env";
  switch (issue.code) {
    case "invalid_type":
      if (value === undefined && path.length === 1 && path[0] === tables) {
        return `is required: add at least one [[${tables}]] table`;
      }
      if (value === undefined) return "is required";
      if (inEnv) return `must be a string, number or boolean, not ${kindOf(value)}`;
      return `must be ${EXPECTED[issue.expected] ?? issue.expected}, not ${kindOf(value)}`;
    case "invalid_union":
      return path[path.length - 2] === "foreach"
        ? `must be a non-empty string or a number, not ${kindOf(value)}${value === "" ? " (empty)" : ""}`
        : `must be a string, number or boolean, not ${kindOf(value)}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, not ${
        JSON.stringify(value)
      }`;
    case "too_small":
      if (issue.origin === "array") {
        return path.length === 1 ? `needs at least one [[${tables}]] table` : "needs at least one item";
      }
      if (issue.origin === "string") return "must not be empty";
      return `must be ${issue.inclusive ? "at least" : "more than"} ${issue.minimum}, not ${value}`;
    case "too_big":
      return `must be at most ${issue.maximum}, not ${value}`;
    case "invalid_format":
      return `${issue.message}, not ${JSON.stringify(value)}`;
    default:
      return issue.message.replace(/^Invalid input: /, "");
  }
}
