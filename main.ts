/**
 * paneflow: one program, CLI and host. This file only dispatches on argv[0]
 * and the verb; nothing heavy is imported at top level.
 *
 * @module
 */
import { describeError } from "./src/errors.ts";
import { ExitCode } from "./src/spec/codes.ts";
import { findVerb, usage } from "./src/verbs/mod.ts";
import { runVerb } from "./src/verbs/_verb.ts";

/** Busybox-style names: `paneflow-mcp` runs `paneflow mcp`. */
function invokedAs(): string | null {
  const exe = Deno.execPath();
  if (/\/deno(\.exe)?$/.test(exe)) return null;
  let argv0 = exe;
  try {
    argv0 = Deno.readTextFileSync("/proc/self/cmdline").split("\0")[0];
  } catch {
    // No /proc (macOS): the executable's own path is the name it was run by.
  }
  return argv0.slice(argv0.lastIndexOf("/") + 1);
}

/** Runs the CLI and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const as = invokedAs();
  if (as === "paneflow-mcp") argv = ["mcp", ...argv];
  else if (as === "paneflow-ai-hook") argv = ["ai-hook", ...argv];
  if (argv[0] === "--version" || argv[0] === "-V") argv = ["version"];
  const [name, ...rest] = argv;
  if (name === undefined) {
    console.error(usage());
    return ExitCode.Usage;
  }
  if (name === "--help" || name === "-h") {
    console.log(usage());
    return ExitCode.Ok;
  }
  const entry = findVerb(name);
  if (!entry) {
    console.error(`paneflow: unknown verb "${name}"\n\n${usage()}`);
    return ExitCode.Usage;
  }
  try {
    const verb = (await entry.load()).default;
    return await runVerb(verb, rest);
  } catch (err) {
    // The agents' hook never fails: a stopped host must not break an agent.
    if (entry.name === "ai-hook") return ExitCode.Ok;
    const { message, exitCode } = describeError(err);
    console.error(`paneflow: ${message}`);
    return exitCode;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
