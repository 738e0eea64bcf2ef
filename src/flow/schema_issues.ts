/**
 * A flow file's schema problems in our words (every one at once, with the
 * key path), and the repair of a step that partly passed, so the checks
 * after the schema still see what can be seen.
 *
 * @module
 */
import { EXPECTED, kindOf, suggest, valueAt } from "../issue_words.ts";
import { FlowSpec, Step } from "../spec/flow.ts";
import { type Issue, PaneSpec } from "../spec/workspace.ts";

/** Why a `ready` pattern is not a valid regex, or null. */
export function regexProblem(pattern: string): string | null {
  try {
    new RegExp(pattern, "m");
    return null;
  } catch (e) {
    return `invalid regex: ${(e as Error).message.replace(/^Invalid regular expression: /, "")}`;
  }
}

const STEP_KEYS = Object.keys(Step.shape);
const KNOWN_KEYS: Record<string, string[]> = {
  top: Object.keys(FlowSpec.shape),
  defaults: ["timeout_secs", "on_failure"],
  step: STEP_KEYS,
  pane: Object.keys(PaneSpec.shape),
  send: ["target", "text", "submit"],
  ready: ["pattern", "timeout_secs"],
  capture: ["var", "lines"],
  message: ["to", "content", "from", "type", "timeout_secs", "var"],
};

/** Schema problems, in our words. */
export function schemaIssues(raw: unknown): Issue[] {
  const parsed = FlowSpec.safeParse(raw);
  if (parsed.success) return [];
  const out: Issue[] = [];
  for (const issue of parsed.error.issues) {
    const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    const value = valueAt(raw, path);
    const last = path[path.length - 1];
    switch (issue.code) {
      case "unrecognized_keys": {
        const table = path.length === 0 ? "top" : typeof last === "number" ? "step" : String(last);
        for (const k of issue.keys) {
          out.push({
            path: [...path, k],
            message: `unknown key "${k}"${suggest(k, KNOWN_KEYS[table] ?? [])}`,
          });
        }
        break;
      }
      case "invalid_type":
        if (value === undefined && path.length === 1 && path[0] === "step") {
          out.push({ path, message: "is required: add at least one [[step]] table" });
        } else if (value === undefined) {
          out.push({ path, message: "is required" });
        } else if (path[path.length - 2] === "env") {
          out.push({ path, message: `must be a string, number or boolean, not ${kindOf(value)}` });
        } else {
          const want = EXPECTED[issue.expected] ?? issue.expected;
          out.push({ path, message: `must be ${want}, not ${kindOf(value)}` });
        }
        break;
      case "invalid_union":
        out.push({
          path,
          message: path[path.length - 2] === "foreach"
            ? `must be a non-empty string or a number, not ${kindOf(value)}${value === "" ? " (empty)" : ""}`
            : `must be a string, number or boolean, not ${kindOf(value)}`,
        });
        break;
      case "invalid_value":
        out.push({
          path,
          message: `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, not ${
            JSON.stringify(value)
          }`,
        });
        break;
      case "too_small":
        if (issue.origin === "array") {
          out.push({
            path,
            message: path.length === 1 ? "needs at least one [[step]] table" : "needs at least one item",
          });
        } else if (issue.origin === "string") out.push({ path, message: "must not be empty" });
        else {
          out.push({
            path,
            message: `must be ${issue.inclusive ? "at least" : "more than"} ${issue.minimum}, not ${value}`,
          });
        }
        break;
      case "too_big":
        out.push({ path, message: `must be at most ${issue.maximum}, not ${value}` });
        break;
      case "invalid_format":
        out.push({ path, message: `${issue.message}, not ${JSON.stringify(value)}` });
        break;
      default:
        out.push({ path, message: issue.message.replace(/^Invalid input: /, "") });
    }
  }
  return out;
}

/**
 * A step as far as it passed the schema: unknown keys dropped, a field with a
 * problem dropped and named in `broken`; null when its `id` or `foreach` is bad.
 */
export function repairStep(
  raw: unknown,
  index: number,
  issues: Issue[],
): { step: Step | null; broken: Set<string> } {
  const broken = new Set<string>();
  const direct = Step.safeParse(raw);
  if (direct.success) return { step: direct.data, broken };
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { step: null, broken };
  const copy = structuredClone(raw) as Record<string, unknown>;
  for (const issue of issues) {
    if (issue.path[0] !== "step" || issue.path[1] !== index) continue;
    const rel = issue.path.slice(2);
    if (!rel.length) continue;
    if (issue.message.startsWith("unknown key")) {
      const parent = valueAt(copy, rel.slice(0, -1)) as Record<string | number, unknown> | undefined;
      if (parent && typeof parent === "object") delete parent[rel[rel.length - 1]];
    } else {
      broken.add(String(rel[0]));
      delete copy[rel[0]];
    }
  }
  if (broken.has("id") || broken.has("foreach")) return { step: null, broken };
  const again = Step.safeParse(copy);
  return { step: again.success ? again.data : null, broken };
}
