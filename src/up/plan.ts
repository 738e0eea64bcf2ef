/**
 * Planning `workspace.up` (docs/up.md): a checked spec becomes one plan per
 * pane — the command (agents resolved through the launcher table), its
 * worktree (git is asked, nothing changes) and port. Pure apart from asking
 * git and the filesystem, and light: `paneflow up --dry-run` imports this
 * without the host.
 *
 * @module
 */
import type { CapsGrant } from "../spec/caps.ts";
import { type Issue, PORT_TOKEN, type ResolvedWorkspace } from "../spec/workspace.ts";
import { allocatePorts } from "./ports.ts";
import { planWorktree, type WorktreePlan } from "./worktree.ts";

/** One pane of a plan: what will run where. */
export interface PanePlan {
  index: number;
  name: string | null;
  agent: string | null;
  /** The agent's launcher command, the pane's command, or null for a shell. */
  command: string | null;
  /** Where it runs (inside the worktree when there is one). */
  cwd: string;
  /** The pane's own env, `${port_offset}` substituted. */
  env: Record<string, string>;
  port: number | null;
  worktree: WorktreePlan | null;
  setup: string | null;
  setup_timeout_secs: number;
  prompt: string | null;
  focus: boolean;
  /** Its capability grant (src/caps/), when the spec gives one. */
  caps?: CapsGrant;
  /** TMUX, TMUX_PANE and the tmux shim on PATH (docs/tmux.md). */
  tmux_compat: boolean;
}

/** Options for {@link planPanes}. */
export interface PlanOptions {
  /** Launcher table (agent name → command). */
  launchers: Record<string, string>;
  /** The environment panes start from (for finding programs on PATH). */
  baseEnv: Record<string, string>;
  /** Plan only these spec indexes (the rest are reused). */
  only?: Set<number>;
  /** Ports already handed out. */
  takenPorts?: Set<number>;
}

function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** Why the program of a shell command cannot be found, or null (also when it cannot tell). */
export function programProblem(command: string, path: string, cwd: string): string | null {
  const m = /^\s*([^\s'"`$;&|<>()=\\]+)(\s|$)/.exec(command);
  if (!m) return null;
  const word = m[1];
  if (word.includes("/")) {
    return isExecutable(word.startsWith("/") ? word : `${cwd}/${word}`)
      ? null
      : `"${word}" is not an executable file`;
  }
  for (const dir of path.split(":")) if (dir && isExecutable(`${dir}/${word}`)) return null;
  return `"${word}" is not on PATH`;
}

/**
 * Plans the panes of a checked spec: commands (agents resolved through the
 * launcher table), worktrees (git is asked, nothing changes), ports.
 */
export async function planPanes(
  ws: ResolvedWorkspace,
  opts: PlanOptions,
): Promise<{ panes: PanePlan[]; issues: Issue[] }> {
  const issues: Issue[] = [];
  const panes: PanePlan[] = [];
  const worktrees = new Map<string, Promise<{ plan: WorktreePlan } | { problem: string }>>();
  for (const p of ws.panes) {
    if (opts.only && !opts.only.has(p.index)) continue;
    let command = p.command;
    if (p.agent !== null) {
      command = opts.launchers[p.agent] ?? null;
      if (command === null) {
        issues.push({
          path: ["panes", p.index, "agent"],
          message: `unknown agent "${p.agent}"; known launchers: ${
            Object.keys(opts.launchers).join(", ")
          } (add others as agents.<name>.command in the config)`,
        });
      }
    }
    let worktree: WorktreePlan | null = null;
    if (p.worktree) {
      if (!worktrees.has(p.worktree.path)) worktrees.set(p.worktree.path, planWorktree(p.worktree));
      const r = await worktrees.get(p.worktree.path)!;
      if ("problem" in r) issues.push({ path: ["panes", p.index, "worktree"], message: r.problem });
      else worktree = { ...r.plan, copy_env: p.worktree.copy_env, teardown: p.worktree.teardown };
    }
    const cwd = worktree ? (worktree.subdir ? `${worktree.path}/${worktree.subdir}` : worktree.path) : p.cwd;
    if (p.agent !== null && command !== null) {
      const PATH = p.env.PATH ?? opts.baseEnv.PATH ?? "";
      const problem = programProblem(command, PATH, p.cwd);
      if (problem) {
        issues.push({
          path: ["panes", p.index, "agent"],
          message:
            `agent "${p.agent}" runs "${command}", but ${problem}; install it or set agents.${p.agent}.command in the config`,
        });
      }
    }
    panes.push({
      index: p.index,
      name: p.name,
      agent: p.agent,
      command,
      cwd,
      env: { ...p.env },
      port: null,
      worktree,
      setup: p.setup,
      setup_timeout_secs: p.setup_timeout_secs,
      ...(p.caps ? { caps: p.caps } : {}),
      prompt: p.prompt,
      focus: p.focus,
      tmux_compat: p.tmux_compat,
    });
  }
  const wantPort = panes.filter((p) => Object.values(p.env).some((v) => v.includes(PORT_TOKEN)));
  if (wantPort.length) {
    try {
      const ports = allocatePorts(ws.port_base, wantPort.length, { taken: opts.takenPorts });
      wantPort.forEach((p, i) => {
        p.port = ports[i];
        for (const [k, v] of Object.entries(p.env)) p.env[k] = v.replaceAll(PORT_TOKEN, String(ports[i]));
      });
    } catch (e) {
      issues.push({ path: ["port_base"], message: (e as Error).message });
    }
  }
  return { panes, issues };
}
