/**
 * The `--caps` flag of `new` and `split`: `<capability>=<scope>`, repeated
 * or space separated (`--caps "write=worker-*,reviewer read=workspace"`),
 * where a scope is `none`, `self`, `workspace`, `all` or a comma list of
 * selectors. Pure, without zod (the host validates the result again).
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { CAPABILITIES, SCOPE_WORDS } from "../spec/caps_names.ts";

/** A grant: capability → scope word or selector list. */
export type Grant = Record<string, string | string[]>;

/** Parses `--caps` values; throws a UsageError naming the bad item. */
export function parseCapsFlags(values: string[]): Grant {
  const out: Grant = {};
  for (const item of values.flatMap((v) => v.split(/\s+/)).filter(Boolean)) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new UsageError(`--caps takes <capability>=<scope>, got "${item}"`);
    const name = item.slice(0, eq);
    if (!(CAPABILITIES as readonly string[]).includes(name)) {
      throw new UsageError(`Unknown capability "${name}" in --caps; one of ${CAPABILITIES.join(", ")}`);
    }
    if (name in out) throw new UsageError(`--caps gives "${name}" twice`);
    const value = item.slice(eq + 1);
    if ((SCOPE_WORDS as readonly string[]).includes(value)) {
      out[name] = value;
      continue;
    }
    const list = value.split(",");
    if (!value || list.some((s) => s === "")) {
      throw new UsageError(
        `--caps ${name}="${value}": a scope is none, self, workspace, all or a comma list of pane selectors`,
      );
    }
    const alone = list.find((s) => s === "none" || s === "all");
    if (alone) throw new UsageError(`--caps ${name}: "${alone}" stands alone, not in a list`);
    out[name] = list;
  }
  return out;
}

/** A scope as the CLI writes it. */
export function formatScope(scope: string | string[]): string {
  return typeof scope === "string" ? scope : scope.join(",");
}
