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
import { LOCAL_ONLY, takeHostFlag } from "./src/remote/flag.ts";

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

/**
 * `args` with the carriage returns Deno dropped: it strips trailing "\r"s
 * (up to two) from every argument, so `paneflow send p $'make\r'` would type
 * no Enter. On Linux the kernel's copy of our argv (/proc/self/cmdline)
 * still has them.
 */
function withTrailingCRs(args: string[]): string[] {
  try {
    const all = Deno.readTextFileSync("/proc/self/cmdline").split("\0").slice(0, -1);
    const tail = all.slice(all.length - args.length);
    if (
      tail.length === args.length &&
      tail.every((a, i) => a.startsWith(args[i]) && /^\r*$/.test(a.slice(args[i].length)))
    ) {
      return tail;
    }
  } catch {
    // No /proc (macOS): what Deno gave is all there is.
  }
  return args;
}

/** Runs the CLI and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const as = invokedAs();
  if (as === "paneflow-mcp") argv = ["mcp", ...argv];
  else if (as === "paneflow-ai-hook") argv = ["ai-hook", ...argv];
  else if (as === "tmux") argv = ["tmux", ...argv];
  // --host <name|ssh://…>: the verb runs against that host, over ssh (the client reads PANEFLOW_HOST).
  let remote: string | null = null;
  try {
    // `paneflow [--host h] tmux …`: what follows the verb is tmux's (send-keys has its own -H).
    const verbAt = argv.indexOf("tmux");
    const head = verbAt >= 0 ? argv.slice(0, verbAt) : null;
    if (head !== null && (head.length === 0 || takeHostFlag(head).argv.length === 0)) {
      ({ host: remote } = takeHostFlag(head));
      argv = argv.slice(verbAt);
    } else ({ host: remote, argv } = takeHostFlag(argv));
  } catch (e) {
    console.error(`paneflow: ${(e as Error).message}`);
    return ExitCode.Usage;
  }
  if (argv[0] === "--version" || argv[0] === "-V") argv = ["version"];
  const [name, ...given] = argv;
  if (remote !== null) {
    if (name !== undefined && LOCAL_ONLY.has(name)) {
      console.error(`paneflow: --host does not apply to ${name}, which runs on this machine`);
      return ExitCode.Usage;
    }
    Deno.env.set("PANEFLOW_HOST", remote);
  }
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
  // Only `send` types its arguments; the other verbs need not pay for the read.
  const rest = entry.name === "send" ? withTrailingCRs(given) : given;
  try {
    const verb = (await entry.load()).default;
    return await runVerb(verb, rest, entry.summary);
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
