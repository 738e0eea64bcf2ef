/**
 * Checking a `caps = {...}` value written in an up or flow file: every
 * problem at its key path (the caller locates it by file, line and column),
 * and never a silently wider grant: an unknown capability, a scope that is
 * not one, or a selector that names no pane of the spec is an error.
 *
 * @module
 */
import { CAPABILITIES, SCOPE_WORDS } from "../spec/caps.ts";
import type { Issue } from "../spec/workspace.ts";
import { selects } from "./select.ts";

const SCOPES = `"none", "self", "workspace", "all" or a list of selectors (["worker-*", "reviewer"])`;

function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "a table";
  return `a ${typeof v} (${JSON.stringify(v)})`;
}

/** A close capability name for a typo, as a hint. */
function nearest(word: string): string {
  const lower = word.toLowerCase();
  const hit = CAPABILITIES.find((c) => c.startsWith(lower.slice(0, 3)) || lower.startsWith(c));
  return hit ? `; did you mean "${hit}"?` : "";
}

/**
 * The problems of one pane's `caps` value at `path` (`["panes", 2, "caps"]`);
 * `names` are the spec's pane names, which selectors must match (null: do not check).
 */
export function capsIssues(value: unknown, path: (string | number)[], names: string[] | null): Issue[] {
  if (value === undefined) return [];
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return [{
      path,
      message: `must be a table of capabilities, e.g. { write = ["worker-*"] }, not ${kindOf(value)}`,
    }];
  }
  const out: Issue[] = [];
  for (const [cap, scope] of Object.entries(value as Record<string, unknown>)) {
    const at = [...path, cap];
    if (!(CAPABILITIES as readonly string[]).includes(cap)) {
      out.push({
        path: at,
        message: `unknown capability "${cap}"${nearest(cap)} (one of ${CAPABILITIES.join(", ")})`,
      });
      continue;
    }
    if (typeof scope === "string") {
      if (!(SCOPE_WORDS as readonly string[]).includes(scope)) {
        out.push({
          path: at,
          message: `"${scope}" is not a scope: write ${SCOPES}; a single pane goes in a list: ["${scope}"]`,
        });
      }
      continue;
    }
    if (!Array.isArray(scope)) {
      out.push({ path: at, message: `must be ${SCOPES}, not ${kindOf(scope)}` });
      continue;
    }
    if (!scope.length) out.push({ path: at, message: 'an empty list grants nothing: write "none"' });
    scope.forEach((sel: unknown, i: number) => {
      const here = [...at, i];
      if (typeof sel !== "string" || sel === "") {
        out.push({ path: here, message: `a selector is a pane name, a glob or an id, not ${kindOf(sel)}` });
        return;
      }
      if (sel === "none" || sel === "all") {
        out.push({ path: here, message: `"${sel}" stands alone: write ${cap} = "${sel}", not in a list` });
        return;
      }
    });
  }
  if (names !== null) out.push(...unmatchedSelectors(value, path, names));
  return out;
}

/** The selectors of a `caps` value that name none of `names` (pane ids and words are not checked). */
export function unmatchedSelectors(value: unknown, path: (string | number)[], names: string[]): Issue[] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  const out: Issue[] = [];
  for (const [cap, scope] of Object.entries(value as Record<string, unknown>)) {
    if (!Array.isArray(scope)) continue;
    scope.forEach((sel: unknown, i: number) => {
      if (typeof sel !== "string" || sel === "" || /^(self|workspace|none|all|\d+)$/.test(sel)) return;
      if (names.some((name) => selects(sel, { id: -1, name }))) return;
      out.push({
        path: [...path, cap, i],
        message: `selector "${sel}" matches no pane of this spec${
          names.length ? ` (its panes: ${names.map((n) => `"${n}"`).join(", ")})` : " (no pane has a name)"
        }`,
      });
    });
  }
  return out;
}
