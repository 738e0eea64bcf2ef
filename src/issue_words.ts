/**
 * Wording shared by the spec checkers (workspace and flow files): how a TOML
 * value is named, "did you mean" suggestions, and zod's expected types in
 * our words.
 *
 * @module
 */

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
