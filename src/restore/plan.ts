/**
 * Restore planning, pure: what each journaled pane comes back as. A shell
 * comes back as the same shell in its last cwd; an agent with its own
 * resume (`claude --resume <id>`, `codex resume <id>`, `gemini --resume
 * <id>`, `opencode --session <id>`) and the same flags and environment;
 * other programs as a shell with a note of what ran there, unless the pane
 * asked for `restart`. Whatever cannot come back as it was (a cwd that is
 * gone, an agent no longer installed, a conversation the agent no longer
 * has) comes back as a shell with the reason. docs/restore.md.
 *
 * @module
 */
import type { JournalPane, PanePlan } from "../spec/restore.ts";

/** What planning may ask of the machine (injected: the unit test fakes it). */
export interface Probe {
  /** Whether a directory exists. */
  isDir(path: string): boolean;
  /** Whether a command (a path, or a name looked up on PATH) can be run. */
  runnable(command: string, env: Record<string, string>): boolean;
  /** Whether the agent still has the conversation; null when that cannot be told. */
  knowsSession(tool: string, id: string, env: Record<string, string>): boolean | null;
}

/** Shells by name: a pane that runs one of these alone is a shell pane. */
const SHELLS = new Set([
  "sh",
  "bash",
  "zsh",
  "fish",
  "dash",
  "ksh",
  "mksh",
  "tcsh",
  "csh",
  "nu",
  "elvish",
  "xonsh",
]);

const base = (path: string) => path.slice(path.lastIndexOf("/") + 1).replace(/^-/, "");

/** Whether `argv` is an interactive shell (no `-c`, no script). */
export function isShell(argv: string[]): boolean {
  if (!SHELLS.has(base(argv[0] ?? ""))) return false;
  return argv.slice(1).every((a) => a.startsWith("-") && a !== "-c");
}

/** Runtimes whose second argument is the program (`node /…/gemini`). */
const RUNTIMES = new Set(["node", "bun", "deno"]);

/** How many leading words name the program. */
function leadOf(argv: string[]): number {
  return RUNTIMES.has(base(argv[0])) && argv.length > 1 ? 2 : 1;
}

/** Drops flags (with their value when `valued`) from `args`. */
function dropFlags(args: string[], valued: string[], bare: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (bare.includes(a)) continue;
    if (valued.includes(a)) {
      if (i + 1 < args.length && !args[i + 1].startsWith("-")) i++;
      continue;
    }
    if (valued.some((f) => f.startsWith("--") && a.startsWith(`${f}=`))) continue;
    out.push(a);
  }
  return out;
}

/**
 * The agent's own resume of conversation `id`, keeping every other flag of
 * `argv`; null for an agent paneflow knows no resume of.
 */
export function resumeArgv(tool: string, argv: string[], id: string): string[] | null {
  const n = leadOf(argv);
  const lead = argv.slice(0, n);
  const rest = argv.slice(n);
  switch (tool) {
    case "claude":
      return [
        ...lead,
        "--resume",
        id,
        ...dropFlags(rest, ["--resume", "-r", "--session-id"], ["--continue", "-c", "--fork-session"]),
      ];
    case "codex": {
      let args = rest;
      if (args[0] === "resume") {
        args = dropFlags(args.slice(1), [], ["--last", "--all"]);
        // The old session id, when it came first.
        if (args[0] && !args[0].startsWith("-")) args = args.slice(1);
      }
      return [...lead, "resume", id, ...args];
    }
    case "gemini":
      return [...lead, "--resume", id, ...dropFlags(rest, ["--resume", "-r", "--session-id"], [])];
    case "opencode":
      return [...lead, "--session", id, ...dropFlags(rest, ["--session", "-s"], ["--continue", "-c"])];
    default:
      return null;
  }
}

/** The words of a command line for a note (quoted where needed; `sh -c <cmd>` shows `<cmd>`). */
export function shown(argv: string[]): string {
  if (argv.length === 3 && argv[1] === "-c" && SHELLS.has(base(argv[0]))) return argv[2];
  return argv.map((a) => /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`).join(" ");
}

/** The nearest directory of `path` (itself or an ancestor) that exists; `/` at worst. */
function nearestDir(path: string, probe: Probe): string {
  let p = path;
  while (p.length > 1) {
    p = p.slice(0, p.lastIndexOf("/")) || "/";
    if (probe.isDir(p)) return p;
  }
  return "/";
}

/** A pane's plan plus what spawning it needs. */
export interface PaneSpawn {
  plan: PanePlan;
  /** The program to run after the history and note (or a shell). */
  argv: string[];
  /** A shell to continue in once `argv` ends (a shell pane that ran an agent). */
  then: string | null;
  env: Record<string, string>;
}

/** Where the pane starts, and why not where it was (a cwd gone; `up`'s worktree removed). */
function placeOf(pane: JournalPane, probe: Probe): { cwd: string; problem: string | null } {
  if (probe.isDir(pane.cwd)) return { cwd: pane.cwd, problem: null };
  // A worktree (`up`'s `<repo>.worktrees/<branch>`) removed meanwhile: the repository.
  const worktree = pane.up?.worktree ?? pane.cwd;
  const repo = /^(.+)\.worktrees\/[^/]+(\/|$)/.exec(worktree)?.[1];
  if (repo && probe.isDir(repo)) {
    return { cwd: repo, problem: `its worktree "${worktree}" was removed; it starts in the repository` };
  }
  return { cwd: nearestDir(pane.cwd, probe), problem: `its directory "${pane.cwd}" no longer exists` };
}

type Ctx = { shell: string; probe: Probe; historyLines: number };

/** A pane's spawn; `argv` null: the shell. */
function spawnOf(
  pane: JournalPane,
  ctx: Ctx,
  cwd: string,
  how: PanePlan["how"],
  more: { argv?: string[]; note?: string | null; problem?: string | null; then?: string | null } = {},
): PaneSpawn {
  const argv = more.argv ?? (isShell(pane.argv) ? pane.argv : [ctx.shell]);
  const problem = more.problem ?? null;
  return {
    plan: {
      name: pane.name,
      was_surface_id: pane.surface_id,
      cwd,
      argv,
      how,
      agent: pane.agent?.tool ?? null,
      session_id: pane.agent?.session_id ?? null,
      note: problem ? `paneflow: not restored as it was: ${problem}` : more.note ?? null,
      problem,
      history_lines: ctx.historyLines,
      surface_id: null,
    },
    argv,
    then: more.then ?? null,
    env: pane.env,
  };
}

/** An agent pane: its own resume, else the same command, else a shell with the reason. */
function planAgent(pane: JournalPane, ctx: Ctx, cwd: string, problem: string | null): PaneSpawn {
  const { tool, session_id: id, argv } = pane.agent!;
  const { probe } = ctx;
  if (problem) {
    return spawnOf(pane, ctx, cwd, "shell", { problem: `${problem}; the agent "${tool}" was not resumed` });
  }
  if (!probe.runnable(argv[0], pane.env)) {
    return spawnOf(pane, ctx, cwd, "shell", {
      problem: `the agent's command "${argv[0]}" is no longer installed`,
    });
  }
  const then = isShell(pane.argv) ? pane.argv[0] : null;
  const resumed = id ? resumeArgv(tool, argv, id) : null;
  if (id && resumed) {
    if (probe.knowsSession(tool, id, pane.env) === false) {
      return spawnOf(pane, ctx, cwd, "shell", { problem: `${tool} no longer has the conversation "${id}"` });
    }
    const note = `paneflow: resuming ${tool}'s conversation ${id}`;
    return spawnOf(pane, ctx, cwd, "resume", { argv: resumed, note, then });
  }
  const note = id
    ? `paneflow: ${tool} has no resume paneflow knows; started again`
    : `paneflow: no conversation id was recorded for ${tool} (no hooks); started again`;
  return spawnOf(pane, ctx, cwd, "same", { argv, note, then });
}

/** Plans one pane; `shell` is the host's shell for panes that come back as one. */
export function planPane(pane: JournalPane, ctx: Ctx): PaneSpawn {
  const { cwd, problem } = placeOf(pane, ctx.probe);
  if (pane.agent && pane.exit_code === null) return planAgent(pane, ctx, cwd, problem);
  const ran = (argv: string[]) => `paneflow: "${shown(argv)}" ran here before the restore`;
  if (problem) return spawnOf(pane, ctx, cwd, "shell", { problem });
  if (pane.exit_code !== null) {
    const note = `paneflow: "${shown(pane.argv)}" had exited with code ${pane.exit_code}`;
    return spawnOf(pane, ctx, cwd, "shell", { note });
  }
  if (isShell(pane.argv)) {
    return spawnOf(pane, ctx, cwd, "shell", { note: pane.foreground ? ran(pane.foreground) : null });
  }
  if (pane.restart) {
    if (!ctx.probe.runnable(pane.argv[0], pane.env)) {
      return spawnOf(pane, ctx, cwd, "shell", {
        problem: `its command "${pane.argv[0]}" is no longer installed`,
      });
    }
    return spawnOf(pane, ctx, cwd, "restart", { argv: pane.argv });
  }
  return spawnOf(pane, ctx, cwd, "shell", { note: `${ran(pane.foreground ?? pane.argv)} (not restarted)` });
}
