/**
 * The shape of a verb: parsing, help and logic declared together. A verb
 * declares its options as data and gets typed values back; anything
 * unexpected is a {@link UsageError} naming the verb and the argument.
 *
 * @module
 */
import { UsageError } from "../errors.ts";

/** One `--option`. */
export interface OptionSpec {
  type: "boolean" | "string" | "number";
  short?: string;
  multiple?: boolean;
  /** Placeholder in help, e.g. `<n>`. */
  value?: string;
  description: string;
}

/** One positional argument. */
export interface PositionalSpec {
  name: string;
  optional?: boolean;
  /** Takes every remaining argument. */
  rest?: boolean;
}

type OptValue<O extends OptionSpec> = O["type"] extends "boolean" ? boolean
  : O["multiple"] extends true ? (O["type"] extends "number" ? number[] : string[])
  : O["type"] extends "number" ? number | undefined
  : string | undefined;

/** Parsed arguments of a verb. */
export interface Parsed<O extends Record<string, OptionSpec>> {
  opts: { [K in keyof O]: OptValue<O[K]> };
  args: string[];
  help: boolean;
}

/** Parses `argv` for the verb `verb`; pure, throws {@link UsageError}. */
export function parseArgs<O extends Record<string, OptionSpec>>(
  verb: string,
  options: O,
  positionals: PositionalSpec[],
  argv: string[],
): Parsed<O> {
  const opts: Record<string, unknown> = {};
  for (const [name, o] of Object.entries(options)) {
    opts[name] = o.type === "boolean" ? false : o.multiple ? [] : undefined;
  }
  const args: string[] = [];
  let help = false;
  const hint = `see paneflow ${verb} --help`;
  const byShort = new Map(
    Object.entries(options).filter(([, o]) => o.short).map(([n, o]) => [o.short!, n]),
  );
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      args.push(...argv.slice(i + 1));
      break;
    }
    if (a === "--help" || a === "-h") {
      help = true;
      continue;
    }
    if (!a.startsWith("-") || a === "-" || /^-\d/.test(a)) {
      args.push(a);
      continue;
    }
    let name: string;
    let inline: string | undefined;
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      name = eq > 0 ? a.slice(2, eq) : a.slice(2);
      inline = eq > 0 ? a.slice(eq + 1) : undefined;
    } else {
      const n = byShort.get(a.slice(1));
      if (!n) throw new UsageError(`Unknown option "${a}" for paneflow ${verb}; ${hint}`);
      name = n;
    }
    const spec = options[name];
    if (!spec) throw new UsageError(`Unknown option "--${name}" for paneflow ${verb}; ${hint}`);
    if (spec.type === "boolean") {
      if (inline !== undefined) {
        throw new UsageError(`Option "--${name}" of paneflow ${verb} takes no value`);
      }
      opts[name] = true;
      continue;
    }
    const raw = inline ?? argv[++i];
    const looksLikeOption = inline === undefined && raw !== undefined &&
      (raw === "--help" || (raw.startsWith("--") && raw.slice(2).split("=")[0] in options));
    if (raw === undefined || looksLikeOption) {
      throw new UsageError(`Option "--${name}" of paneflow ${verb} needs a value`);
    }
    let value: string | number = raw;
    if (spec.type === "number") {
      value = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(value)) {
        throw new UsageError(`Option "--${name}" of paneflow ${verb} needs a number, got "${raw}"`);
      }
    }
    if (spec.multiple) (opts[name] as unknown[]).push(value);
    else opts[name] = value;
  }
  if (!help) checkPositionals(verb, positionals, args);
  return { opts: opts as Parsed<O>["opts"], args, help };
}

function checkPositionals(verb: string, positionals: PositionalSpec[], args: string[]) {
  const required = positionals.filter((p) => !p.optional).length;
  const rest = positionals.some((p) => p.rest);
  if (args.length < required) {
    const missing = positionals[args.length].name;
    throw new UsageError(`Missing <${missing}> for paneflow ${verb}; see paneflow ${verb} --help`);
  }
  if (!rest && args.length > positionals.length) {
    throw new UsageError(
      `Unexpected argument "${args[positionals.length]}" for paneflow ${verb}; see paneflow ${verb} --help`,
    );
  }
}

/** Renders a verb's help from its declaration. */
export function renderHelp(
  verb: { name: string; summary: string; usage: string; aliases?: string[]; details?: string },
  options: Record<string, OptionSpec>,
): string {
  const lines = [`Usage: ${verb.usage}`, "", verb.summary];
  if (verb.details) lines.push("", verb.details);
  const rows = Object.entries(options).map(([n, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : ""}--${n}${
      o.type === "boolean" ? "" : ` ${o.value ?? "<value>"}`
    }`;
    return [flag, o.description + (o.multiple ? " (repeatable)" : "")];
  });
  rows.push(["-h, --help", "Show this help"]);
  const width = Math.max(...rows.map((r) => r[0].length));
  lines.push("", "Options:", ...rows.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`));
  if (verb.aliases?.length) lines.push("", `Aliases: ${verb.aliases.join(", ")}`);
  return lines.join("\n");
}

/**
 * A CLI verb. `run` returns the exit code or throws. Its one-line summary is
 * not here: the registry (`mod.ts`) carries every verb's summary, for
 * `paneflow help` and for the verb's own `--help`.
 */
export interface Verb<O extends Record<string, OptionSpec> = Record<string, OptionSpec>> {
  name: string;
  aliases?: string[];
  usage: string;
  details?: string;
  options: O;
  positionals: PositionalSpec[];
  /** Hands every argument to `run` unparsed, in `args` (`paneflow tmux`: tmux's own syntax). */
  passThrough?: boolean;
  run(p: Parsed<O>): Promise<number>;
}

/** Declares a verb (keeps the option types). */
export function defineVerb<O extends Record<string, OptionSpec>>(verb: Verb<O>): Verb<O> {
  return verb;
}

/** Parses argv for a verb and runs it, or prints its help (`summary`: the registry's). */
export async function runVerb<O extends Record<string, OptionSpec>>(
  verb: Verb<O>,
  argv: string[],
  summary: string,
): Promise<number> {
  const parsed = verb.passThrough && !(argv.length === 1 && argv[0] === "--help")
    ? { opts: parseArgs(verb.name, verb.options, [], []).opts, args: argv, help: false }
    : parseArgs(verb.name, verb.options, verb.positionals, argv);
  if (parsed.help) {
    console.log(renderHelp({ ...verb, summary }, verb.options));
    return 0;
  }
  return await verb.run(parsed);
}

const encoder = new TextEncoder();

/**
 * Writes `text` and a newline to stdout. One write call: a one-shot CLI
 * spends ~0.25 ms in its first `console.log` setting up the console.
 */
export function printLine(text: string): void {
  const data = encoder.encode(text + "\n");
  let off = 0;
  while (off < data.length) off += Deno.stdout.writeSync(data.subarray(off));
}

/** Prints one JSON document on stdout. */
export function printJson(value: unknown): void {
  printLine(JSON.stringify(value, null, 2));
}

/** Prints rows as aligned columns (the last column is not padded). */
export function printTable(header: string[], rows: (string | number | null)[][]): void {
  const cells = [header, ...rows.map((r) => r.map((c) => (c === null ? "-" : String(c))))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  for (const r of cells) {
    printLine(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ").trimEnd());
  }
}
