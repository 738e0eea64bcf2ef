/**
 * The shape of a verb: parsing, help and logic declared together.
 *
 * @module
 */
import { type OptionSpec, parseArgs, type Parsed, type PositionalSpec, renderHelp } from "./_args.ts";

/** A CLI verb. `run` returns the exit code or throws. */
export interface Verb<O extends Record<string, OptionSpec> = Record<string, OptionSpec>> {
  name: string;
  aliases?: string[];
  summary: string;
  usage: string;
  details?: string;
  options: O;
  positionals: PositionalSpec[];
  run(p: Parsed<O>): Promise<number>;
}

/** Declares a verb (keeps the option types). */
export function defineVerb<O extends Record<string, OptionSpec>>(verb: Verb<O>): Verb<O> {
  return verb;
}

/** Parses argv for a verb and runs it, or prints its help. */
export async function runVerb<O extends Record<string, OptionSpec>>(
  verb: Verb<O>,
  argv: string[],
): Promise<number> {
  const parsed = parseArgs(verb.name, verb.options, verb.positionals, argv);
  if (parsed.help) {
    console.log(renderHelp(verb, verb.options));
    return 0;
  }
  return await verb.run(parsed);
}

/** Prints one JSON document on stdout. */
export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

/** Prints rows as aligned columns (the last column is not padded). */
export function printTable(header: string[], rows: (string | number | null)[][]): void {
  const cells = [header, ...rows.map((r) => r.map((c) => (c === null ? "-" : String(c))))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  for (const r of cells) {
    console.log(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ").trimEnd());
  }
}
