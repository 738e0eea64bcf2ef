/**
 * Caller-supplied regular expressions (matchers, redaction rules) with a
 * bounded cost: they run on RE2JS, a linear-time engine with the RE2 syntax
 * ptywright's Rust `regex` crate also follows (no backreferences, no
 * lookaround), so a pattern like `(a+)+$` cannot backtrack catastrophically;
 * the source is capped at {@link PwLimits.regexMaxChars} and the compiled
 * program's size too. The host's own fixed patterns use JS RegExp.
 *
 * @module
 */
import { RE2JS } from "re2js";
import { PwLimits } from "../../spec/ptywright.ts";

/** Largest compiled program (RE2 instructions) accepted. */
const MAX_PROGRAM = 20_000;

/** A compiled caller regex. */
export interface SafeRegex {
  source: string;
  /** The first match at or after `from`: its span and first group (else the whole match). */
  find(text: string, from?: number): { start: number; end: number; capture: string } | null;
  /** Every match replaced by `replacement` (taken literally). */
  replaceAll(text: string, replacement: string): string;
}

/** Compiles `source`; throws an Error whose message says what is wrong. */
export function compileSafe(source: string): SafeRegex {
  if (source.length > PwLimits.regexMaxChars) {
    throw new Error(`pattern is ${source.length} characters; the limit is ${PwLimits.regexMaxChars}`);
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (e) {
    throw new Error((e as Error).message.replace(/^error parsing regexp: /, ""), { cause: e });
  }
  if (re.programSize() > MAX_PROGRAM) {
    throw new Error(`pattern compiles to ${re.programSize()} instructions; the limit is ${MAX_PROGRAM}`);
  }
  return {
    source,
    find(text, from = 0) {
      const m = re.matcher(text);
      if (!m.find(from)) return null;
      const capture = re.groupCount() > 0 && m.group(1) !== null ? m.group(1)! : m.group(0) ?? "";
      return { start: m.start(), end: m.end(), capture };
    },
    replaceAll(text, replacement) {
      const m = re.matcher(text);
      let out = "";
      let last = 0;
      let from = 0;
      while (from <= text.length && m.find(from)) {
        const start = m.start();
        const end = m.end();
        out += text.slice(last, start) + replacement;
        last = end;
        from = end > start ? end : end + 1;
      }
      return last === 0 && out === "" ? text : out + text.slice(last);
    },
  };
}
