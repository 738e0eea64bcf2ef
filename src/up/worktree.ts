/**
 * Managed git worktrees for `paneflow up` (docs/up.md): `<repo>.worktrees/<branch>`
 * on a new branch from HEAD or an existing branch, the repository's
 * gitignored `.env*` files copied in, teardown on close ("auto" removes a
 * clean worktree and never the branch; "keep" keeps it), and a state file
 * next to the socket so that worktrees left by a killed host are pruned at the
 * next start. Git runs through dax.
 *
 * @module
 */
import type { WorktreeSpec } from "../spec/workspace.ts";
import { dirname } from "../paths.ts";

/** What a git command gave. */
interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs git with `args` (never throws; a timeout gives code 124). */
export async function git(
  args: string[],
  opts: { cwd?: string; timeoutMs?: number } = {},
): Promise<GitResult> {
  const { $ } = await import("dax-sh");
  let cmd = $`git ${args}`
    .env({ GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" })
    .quiet()
    .noThrow()
    .timeout(opts.timeoutMs ?? 60_000);
  if (opts.cwd) cmd = cmd.cwd(opts.cwd);
  const r = await cmd;
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

function firstLine(r: GitResult): string {
  const line = (r.stderr.trim() || r.stdout.trim()).split("\n")[0] ?? "";
  return line.replace(/^(fatal|error): /, "") || `git exited ${r.code}`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** One entry of `git worktree list --porcelain`. */
interface ListedWorktree {
  path: string;
  branch: string | null;
}

async function listWorktrees(repo: string): Promise<ListedWorktree[]> {
  const r = await git(["-C", repo, "worktree", "list", "--porcelain"]);
  if (r.code !== 0) throw new Error(`Cannot list the worktrees of "${repo}": ${firstLine(r)}`);
  const out: ListedWorktree[] = [];
  for (const block of r.stdout.split("\n\n")) {
    const path = /^worktree (.+)$/m.exec(block)?.[1];
    if (!path) continue;
    const ref = /^branch (.+)$/m.exec(block)?.[1] ?? null;
    out.push({ path, branch: ref?.replace(/^refs\/heads\//, "") ?? null });
  }
  return out;
}

async function realOr(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch {
    return path;
  }
}

/** How a worktree will be had. */
export type WorktreeAction = "create_branch" | "checkout_branch" | "track_remote" | "reuse";

/** A worktree ready to be created. */
export interface WorktreePlan extends WorktreeSpec {
  action: WorktreeAction;
  /** For "track_remote": the remote branch; for "create_branch": the commit HEAD points at. */
  from: string | null;
  /** The gitignored `.env*` files of the repository root that would be copied. */
  env_files: string[];
}

/**
 * Decides how to get `wt` without changing anything; a problem (branch
 * checked out elsewhere, path taken, no commits) is returned, not thrown.
 */
export async function planWorktree(wt: WorktreeSpec): Promise<{ plan: WorktreePlan } | { problem: string }> {
  let listed: ListedWorktree[];
  try {
    listed = await listWorktrees(wt.repo);
  } catch (e) {
    return { problem: (e as Error).message };
  }
  const env_files = wt.copy_env ? await ignoredEnvFiles(wt.repo) : [];
  const base = { ...wt, env_files };
  for (const l of listed) {
    const same = (await realOr(l.path)) === wt.path || l.path === wt.path;
    if (same) {
      if (l.branch === wt.branch) return { plan: { ...base, action: "reuse", from: null } };
      return {
        problem: `"${wt.path}" is already a worktree of ${
          l.branch ? `branch "${l.branch}"` : "a detached HEAD"
        }; remove it with git worktree remove or pick another branch`,
      };
    }
  }
  const elsewhere = listed.find((l) => l.branch === wt.branch);
  if (elsewhere) {
    return {
      problem: `branch "${wt.branch}" is already checked out at "${elsewhere.path}"; ` +
        `git allows one worktree per branch: pick another branch or switch that checkout`,
    };
  }
  if (await exists(wt.path)) {
    return { problem: `"${wt.path}" already exists and is not a worktree of "${wt.repo}"; move it away` };
  }
  const local = await git(["-C", wt.repo, "rev-parse", "--verify", "--quiet", `refs/heads/${wt.branch}`]);
  if (local.code === 0) return { plan: { ...base, action: "checkout_branch", from: null } };
  const remote = await git([
    "-C",
    wt.repo,
    "for-each-ref",
    "--format=%(refname:short)",
    `refs/remotes/*/${wt.branch}`,
  ]);
  const remotes = remote.stdout.split("\n").filter(Boolean);
  if (remotes.length === 1) return { plan: { ...base, action: "track_remote", from: remotes[0] } };
  const head = await git(["-C", wt.repo, "rev-parse", "--verify", "--quiet", "--short", "HEAD"]);
  if (head.code !== 0) {
    return {
      problem:
        `the repository "${wt.repo}" has no commits yet, so branch "${wt.branch}" cannot start from HEAD; commit once first`,
    };
  }
  return { plan: { ...base, action: "create_branch", from: head.stdout.trim() } };
}

/** The gitignored `.env*` files at the root of `repo`. */
export async function ignoredEnvFiles(repo: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(repo)) {
      if (e.isFile && e.name.startsWith(".env")) names.push(e.name);
    }
  } catch {
    return [];
  }
  if (!names.length) return [];
  const r = await git(["-C", repo, "check-ignore", "--", ...names.sort()]);
  return r.stdout.split("\n").map((l) => l.trim()).filter((l) => names.includes(l));
}

/** Creates (or reuses) a planned worktree; returns whether it was created now and the files copied. */
export async function createWorktree(plan: WorktreePlan): Promise<{ created: boolean; copied: string[] }> {
  let created = false;
  if (plan.action !== "reuse") {
    await Deno.mkdir(dirname(plan.path), { recursive: true });
    const args = plan.action === "create_branch"
      ? ["worktree", "add", "-b", plan.branch, plan.path, "HEAD"]
      : plan.action === "track_remote"
      ? ["worktree", "add", "--track", "-b", plan.branch, plan.path, plan.from!]
      : ["worktree", "add", plan.path, plan.branch];
    const r = await git(["-C", plan.repo, ...args]);
    if (r.code !== 0) {
      await removeEmptyParents(plan.path, plan.repo);
      throw new Error(`Cannot create worktree "${plan.path}" for branch "${plan.branch}": ${firstLine(r)}`);
    }
    created = true;
  }
  const copied: string[] = [];
  if (plan.copy_env) {
    for (const name of await ignoredEnvFiles(plan.repo)) {
      const to = `${plan.path}/${name}`;
      if (await exists(to)) continue;
      await Deno.copyFile(`${plan.repo}/${name}`, to);
      copied.push(name);
    }
  }
  return { created, copied };
}

/** Removes now-empty directories between a removed worktree and `<repo>.worktrees` (inclusive). */
async function removeEmptyParents(path: string, repo: string) {
  const top = `${repo}.worktrees`;
  let d = dirname(path);
  while (d.length >= top.length && d.startsWith(top)) {
    try {
      await Deno.remove(d);
    } catch {
      return;
    }
    d = dirname(d);
  }
}

/** What teardown did. */
export type TeardownResult = "removed" | "kept_dirty" | "kept" | "gone";

/**
 * Tears a worktree down by its mode: "auto" removes it when it has no
 * modified or untracked files (its branch stays), "keep" keeps it.
 */
export async function teardownWorktree(
  entry: { path: string; repo: string; teardown: "auto" | "keep" },
): Promise<{ result: TeardownResult; detail?: string }> {
  if (!(await exists(entry.path))) {
    await git(["-C", entry.repo, "worktree", "prune"]);
    await removeEmptyParents(entry.path, entry.repo);
    return { result: "gone" };
  }
  if (entry.teardown === "keep") return { result: "kept" };
  const status = await git(["-C", entry.path, "status", "--porcelain"]);
  if (status.code !== 0) return { result: "kept", detail: firstLine(status) };
  if (status.stdout.trim()) {
    const n = status.stdout.trim().split("\n").length;
    return { result: "kept_dirty", detail: `${n} changed or untracked file${n === 1 ? "" : "s"}` };
  }
  const r = await git(["-C", entry.repo, "worktree", "remove", entry.path]);
  if (r.code !== 0) return { result: "kept", detail: firstLine(r) };
  await removeEmptyParents(entry.path, entry.repo);
  return { result: "removed" };
}

/** A managed worktree as recorded in the state file. */
export interface ManagedWorktree {
  socket: string;
  path: string;
  repo: string;
  branch: string;
  teardown: "auto" | "keep";
  host_pid: number;
  created_at: number;
}

/** The state file of the host on `socket`: `<socket dir>/worktrees.json`. */
export function statePath(socket: string): string {
  return `${dirname(socket)}/worktrees.json`;
}

async function readState(file: string): Promise<ManagedWorktree[]> {
  try {
    const data = JSON.parse(await Deno.readTextFile(file));
    return Array.isArray(data?.worktrees) ? data.worktrees : [];
  } catch {
    return [];
  }
}

async function writeState(file: string, entries: ManagedWorktree[]) {
  if (!entries.length) {
    await Deno.remove(file).catch(() => {});
    return;
  }
  const tmp = `${file}.${Deno.pid}.tmp`;
  await Deno.writeTextFile(tmp, JSON.stringify({ worktrees: entries }, null, 2) + "\n", { mode: 0o600 });
  await Deno.rename(tmp, file);
}

/**
 * The worktrees one host manages: which panes use each, the state file, and
 * teardown once the last pane using a worktree is closed.
 */
export class WorktreeManager {
  #users = new Map<string, { entry: ManagedWorktree; surfaces: Set<number> }>();
  #chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly _socket: string, private readonly _log: (line: string) => void) {}

  /** Runs state-file updates one at a time. */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(fn, fn);
    this.#chain = next.catch(() => {});
    return next;
  }

  async #update(fn: (entries: ManagedWorktree[]) => ManagedWorktree[]) {
    await this.#serial(async () => {
      const file = statePath(this._socket);
      await writeState(file, fn(await readState(file)));
    });
  }

  /** Records that `surface` uses the worktree of `plan`. */
  async attach(plan: WorktreePlan, surface: number): Promise<void> {
    const known = this.#users.get(plan.path);
    if (known) {
      known.surfaces.add(surface);
      return;
    }
    const entry: ManagedWorktree = {
      socket: this._socket,
      path: plan.path,
      repo: plan.repo,
      branch: plan.branch,
      teardown: plan.teardown,
      host_pid: Deno.pid,
      created_at: Date.now(),
    };
    this.#users.set(plan.path, { entry, surfaces: new Set([surface]) });
    await this.#update((all) => [...all.filter((e) => e.path !== entry.path), entry]);
  }

  /** The worktree path a live pane uses, if any. */
  worktreeOf(surface: number): string | null {
    for (const [path, u] of this.#users) if (u.surfaces.has(surface)) return path;
    return null;
  }

  /** Panes were closed: tears down the worktrees no pane uses any more. */
  async closed(surfaces: number[]): Promise<void> {
    const done: ManagedWorktree[] = [];
    for (const [path, u] of this.#users) {
      for (const id of surfaces) u.surfaces.delete(id);
      if (u.surfaces.size) continue;
      this.#users.delete(path);
      done.push(u.entry);
    }
    for (const entry of done) {
      const { result, detail } = await teardownWorktree(entry).catch((e) => ({
        result: "kept" as const,
        detail: (e as Error).message,
      }));
      this._log(describeTeardown(entry, result, detail));
    }
    if (done.length) {
      const paths = new Set(done.map((e) => e.path));
      await this.#update((all) => all.filter((e) => !paths.has(e.path)));
    }
  }
}

function describeTeardown(entry: ManagedWorktree, result: TeardownResult, detail?: string): string {
  switch (result) {
    case "removed":
      return `worktree ${entry.path} removed (branch "${entry.branch}" kept)`;
    case "kept_dirty":
      return `worktree ${entry.path} kept: ${detail}`;
    case "gone":
      return `worktree ${entry.path} was already gone; pruned`;
    default:
      return `worktree ${entry.path} kept${detail ? `: ${detail}` : ' (worktree_teardown = "keep")'}`;
  }
}

/**
 * At host start: the worktrees a previous host on this socket managed are
 * orphans (a live host would hold the socket). Prunes git's records of
 * vanished ones and tears the rest down by their mode.
 */
export async function pruneOrphanWorktrees(
  socket: string,
  log: (line: string) => void,
  /** Worktrees to leave alone (and recorded): restore brings their panes back. */
  keep: (path: string) => boolean = () => false,
): Promise<void> {
  const file = statePath(socket);
  const all = await readState(file);
  const kept = all.filter((e) => e.socket === socket && keep(e.path));
  for (const e of kept) log(`worktree ${e.path} kept: a restored pane works in it`);
  const mine = all.filter((e) => e.socket === socket && !keep(e.path));
  if (!mine.length) return;
  for (const repo of new Set(mine.map((e) => e.repo))) {
    if (await exists(repo)) await git(["-C", repo, "worktree", "prune"], { timeoutMs: 15_000 });
  }
  for (const entry of mine) {
    if (!(await exists(entry.repo))) continue;
    const { result, detail } = await teardownWorktree(entry).catch((e) => ({
      result: "kept" as const,
      detail: (e as Error).message,
    }));
    log(`orphaned ${describeTeardown(entry, result, detail)}`);
  }
  await writeState(file, all.filter((e) => e.socket !== socket || keep(e.path)));
}
