/**
 * Redaction of sensitive-looking text, as ptywright's
 * (https://github.com/utensils/ptywright/blob/main/src/redaction.rs): bearer tokens,
 * `sk-` keys and `api_key=`/`token:`/`password=`… values, then a call's
 * extra literals and regexes; the replacement defaults to `[REDACTED]`.
 *
 * @module
 */
import { RpcError } from "../errors.ts";
import { PwError, type Redaction } from "../spec/ptywright.ts";
import { compileSafe, type SafeRegex } from "../core/session/regex.ts";

/** A ready-to-apply policy; `null` means no redaction. */
export interface Policy {
  replacement: string;
  literals: string[];
  regexes: SafeRegex[];
}

/** The default policy: on, `[REDACTED]`, no extra rules. */
export const DEFAULT_POLICY: Policy = { replacement: "[REDACTED]", literals: [], regexes: [] };

const BEARER = /(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi;
const SK = /\bsk-[A-Za-z0-9_-]{16,}\b/g;
const ASSIGNED = /(\b(?:api[_-]?key|token|secret|password|passwd|authorization)\b\s*[:=]\s*)[^\s,'"\]}]+/gi;

/** Every text a default pattern matches holds one of these words (case aside). */
const KEYWORDS = /bearer|sk-|api[_-]?key|token|secret|passw(?:or)?d|authorization/i;

/**
 * Whether `policy` may change `text` or a piece of it (false: certainly
 * not, so nothing cut from `text`, a screen row say, needs redacting
 * either). Rules of the caller's own regexes are not looked into: true.
 */
export function mayRedact(text: string, policy: Policy): boolean {
  if (policy.regexes.length || KEYWORDS.test(text)) return true;
  return policy.literals.some((l) => text.includes(l));
}

/**
 * The policy of a read's `redact` and `redaction` params: `redact:false`
 * turns it off even with a `redaction` object; a `redaction` object is on
 * whatever its `enabled` says (as ptywright forces it). A bad regex is
 * -32602 naming it.
 */
export function policyOf(redact: boolean | undefined, redaction: Redaction | undefined): Policy | null {
  let regexes: SafeRegex[] = [];
  if (redaction?.extra_regexes) {
    regexes = redaction.extra_regexes.map((source) => {
      try {
        return compileSafe(source);
      } catch (e) {
        throw new RpcError(
          PwError.InvalidParams,
          `invalid redaction regex \`${source}\`: ${(e as Error).message}`,
          undefined,
          { cause: e },
        );
      }
    });
  }
  if (redact === false) return null;
  if (!redaction) return DEFAULT_POLICY;
  return {
    replacement: redaction.replacement,
    literals: (redaction.extra_literals ?? []).filter((l) => l !== ""),
    regexes,
  };
}

/** Applies `policy` (null: none) to `text`. */
export function redact(text: string, policy: Policy | null = DEFAULT_POLICY): string {
  if (!policy || !text) return text;
  const r = policy.replacement;
  const fn = (_m: string, prefix: string) => prefix + r;
  let out = text.replace(BEARER, fn).replace(SK, () => r).replace(ASSIGNED, fn);
  for (const literal of policy.literals) out = out.split(literal).join(r);
  for (const re of policy.regexes) out = re.replaceAll(out, r);
  return out;
}
