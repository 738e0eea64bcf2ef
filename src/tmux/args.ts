/**
 * tmux's command line, parsed as tmux 3.3a does: global options up to the
 * first word, then one command with getopt-style flags (clustered, values
 * attached or separate, `--` ends them, the first non-flag word too). Pure.
 *
 * @module
 */
import { type CommandSpec, findCommand } from "./table.ts";

/** tmux's global options that paneflow reads. */
export interface Globals {
  /** `-L name`: a socket name. */
  socketName?: string;
  /** `-S path`: a socket path. */
  socketPath?: string;
  /** `-V`: print the version. */
  version: boolean;
}

/** One parsed command. */
export interface Command {
  spec: CommandSpec;
  /** Flags: a boolean flag maps to true, a flag with a value to its (last) value. */
  flags: Map<string, string | true>;
  /** Every value of a repeatable flag (`-e`). */
  repeated: Map<string, string[]>;
  args: string[];
}

/** A parse error worded as tmux words it; exit code 1. */
export class TmuxError extends Error {}

const GLOBAL_WITH_VALUE = new Set(["c", "f", "L", "S", "T"]);
const GLOBAL_BOOLEAN = new Set(["2", "C", "D", "l", "N", "u", "V", "v"]);

/** Splits `argv` into the global options and the command words. */
export function parseGlobals(argv: string[]): { globals: Globals; rest: string[] } {
  const globals: Globals = { version: false };
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      i++;
      break;
    }
    if (!a.startsWith("-") || a === "-") break;
    for (let j = 1; j < a.length; j++) {
      const f = a[j];
      if (GLOBAL_WITH_VALUE.has(f)) {
        const value = j + 1 < a.length ? a.slice(j + 1) : argv[++i];
        if (value === undefined) {
          throw new TmuxError(
            `usage: tmux [-2CDlNuVv] [-c shell-command] [-f file] [-L socket-name] [-S socket-path] [-T features] [command [flags]]`,
          );
        }
        if (f === "L") globals.socketName = value;
        if (f === "S") globals.socketPath = value;
        break;
      }
      if (!GLOBAL_BOOLEAN.has(f)) {
        throw new TmuxError(
          `usage: tmux [-2CDlNuVv] [-c shell-command] [-f file] [-L socket-name] [-S socket-path] [-T features] [command [flags]]`,
        );
      }
      if (f === "V") globals.version = true;
    }
  }
  return { globals, rest: argv.slice(i) };
}

/** Parses one command's words (its name first). */
export function parseCommand(words: string[]): Command {
  const [name, ...argv] = words;
  const found = findCommand(name);
  if (found === null) throw new TmuxError(`unknown command: ${name}`);
  if (Array.isArray(found)) {
    throw new TmuxError(`ambiguous command: ${name}, could be: ${found.map((c) => c.name).join(", ")}`);
  }
  const spec = found;
  const flags = new Map<string, string | true>();
  const repeated = new Map<string, string[]>();
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      i++;
      break;
    }
    if (!a.startsWith("-") || a === "-") break;
    for (let j = 1; j < a.length; j++) {
      const f = a[j];
      const at = spec.flags.indexOf(f);
      if (at < 0 || f === ":") throw new TmuxError(`command ${spec.name}: unknown flag -${f}`);
      if (spec.flags[at + 1] !== ":") {
        flags.set(f, true);
        continue;
      }
      const value = j + 1 < a.length ? a.slice(j + 1) : argv[++i];
      if (value === undefined) throw new TmuxError(`command ${spec.name}: -${f} expects an argument`);
      flags.set(f, value);
      repeated.set(f, [...(repeated.get(f) ?? []), value]);
      break;
    }
  }
  const args = argv.slice(i);
  if (args.length > spec.maxArgs) {
    throw new TmuxError(`command ${spec.name}: too many arguments (need at most ${spec.maxArgs})`);
  }
  if (args.length < (spec.minArgs ?? 0)) {
    throw new TmuxError(`command ${spec.name}: too few arguments (need at least ${spec.minArgs})`);
  }
  return { spec, flags, repeated, args };
}

/** A string flag's value, or undefined. */
export function flagValue(cmd: Command, f: string): string | undefined {
  const v = cmd.flags.get(f);
  return typeof v === "string" ? v : undefined;
}
