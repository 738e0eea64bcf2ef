/**
 * A flow file's schema problems in our words (every one at once, with the
 * key path), and the repair of a step that partly passed, so the checks
 * after the schema still see what can be seen.
 *
 * @module
 */
import { capsIssues } from "../caps/check.ts";
import { valueAt, zodIssues } from "../issue_words.ts";
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
  // A pane's `caps` has its own checker and words (src/caps/check.ts), once per caps value.
  const capsPaths = new Map<string, (string | number)[]>();
  const rest = parsed.error.issues.filter((issue) => {
    const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    const at = path.indexOf("caps");
    if (at < 1 || path[at - 1] !== "pane") return true;
    capsPaths.set(JSON.stringify(path.slice(0, at + 1)), path.slice(0, at + 1));
    return false;
  });
  const caps = [...capsPaths.values()].flatMap((at) => capsIssues(valueAt(raw, at), at, null));
  return [
    ...caps,
    ...zodIssues(raw, rest, {
      tables: "step",
      knownKeys(path) {
        const last = path[path.length - 1];
        const table = path.length === 0 ? "top" : typeof last === "number" ? "step" : String(last);
        return KNOWN_KEYS[table] ?? [];
      },
    }),
  ];
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
