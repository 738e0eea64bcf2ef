/**
 * What the task scripts (build, compile) share: the project's directory, a
 * failure that carries its exit code, strict option parsing with `--help`,
 * paths relative to where `deno task` was run, and the entry point that
 * turns a failure into one line on stderr.
 *
 * @module
 */
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";

/** The project's directory, with a trailing slash. */
export const ROOT = decodeURIComponent(new URL("../", import.meta.url).pathname);

/** A task that cannot be done; `code` is the exit code (2 for usage). */
export class Failure extends Error {
  constructor(message: string, readonly code = 1, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * Parses `argv` strictly against `options` plus `-h, --help`. A bad option is
 * a {@link Failure} (exit 2) with `usage`; `--help` prints `usage` and gives null.
 */
export function parseOptions<const O extends ParseArgsOptionsConfig>(
  argv: string[],
  options: O,
  usage: string,
) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...options, help: { type: "boolean", short: "h", default: false } },
      strict: true,
      allowPositionals: false,
    });
  } catch (e) {
    throw new Failure(`${(e as Error).message}\n\n${usage}`, 2, { cause: e });
  }
  if ((parsed.values as { help?: boolean }).help) {
    console.log(usage);
    return null;
  }
  return parsed.values;
}

/** `path` as the caller meant it: `deno task` runs in the config's directory, not the caller's. */
export function fromCaller(path: string): string {
  return path.startsWith("/") ? path : `${Deno.env.get("INIT_CWD") ?? Deno.cwd()}/${path}`;
}

/** Runs a task script's `main`; a {@link Failure} is one line `<name>: <message>` and its exit code. */
export async function runScript(name: string, main: (argv: string[]) => Promise<void>): Promise<void> {
  try {
    await main(Deno.args);
  } catch (e) {
    if (!(e instanceof Failure)) throw e;
    console.error(`${name}: ${e.message}`);
    Deno.exit(e.code);
  }
}
