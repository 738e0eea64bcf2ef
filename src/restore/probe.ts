/**
 * The machine as restore planning sees it: directories, commands on PATH,
 * and whether an agent still has a conversation (Claude Code keeps one
 * `<session id>.jsonl` per conversation under `$CLAUDE_CONFIG_DIR/projects/`
 * (default `~/.claude`); Codex one `rollout-…-<thread id>.jsonl` under
 * `$CODEX_HOME/sessions/` (default `~/.codex`)).
 *
 * @module
 */
import type { Probe } from "./plan.ts";

function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

function runnable(command: string, env: Record<string, string>): boolean {
  if (command.includes("/")) return isExecutable(command);
  const path = env.PATH ?? Deno.env.get("PATH") ?? "/usr/bin:/bin";
  return path.split(":").some((dir) => dir && isExecutable(`${dir}/${command}`));
}

/** Looks for a file whose name includes `needle` under `dir`, `depth` levels down at most. */
function findFile(dir: string, needle: string, depth: number, budget: { left: number }): boolean {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return false;
  }
  for (const e of entries) {
    if (--budget.left < 0) return false;
    if (e.isFile && e.name.includes(needle)) return true;
  }
  if (depth === 0) return false;
  return entries.some((e) => e.isDirectory && findFile(`${dir}/${e.name}`, needle, depth - 1, budget));
}

function knowsSession(tool: string, id: string, env: Record<string, string>): boolean | null {
  const get = (k: string) => env[k] ?? Deno.env.get(k);
  const home = get("HOME") ?? "/";
  // Ids are the agents' own (UUIDs); anything with a path separator cannot be one.
  if (id.includes("/")) return false;
  switch (tool) {
    case "claude": {
      const dir = `${get("CLAUDE_CONFIG_DIR") ?? `${home}/.claude`}/projects`;
      if (!isDir(dir)) return false;
      return findFile(dir, `${id}.jsonl`, 1, { left: 100_000 });
    }
    case "codex": {
      const dir = `${get("CODEX_HOME") ?? `${home}/.codex`}/sessions`;
      if (!isDir(dir)) return false;
      return findFile(dir, id, 3, { left: 100_000 });
    }
    default:
      return null;
  }
}

/** The real machine. */
export const machine: Probe = { isDir, runnable, knowsSession };
