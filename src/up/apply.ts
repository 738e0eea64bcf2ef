/**
 * `workspace.up` (docs/up.md): brings a workspace spec up on the host. Checks
 * the whole spec first (nothing is created unless all of it is valid), plans
 * commands, ports and worktrees, then creates worktrees and panes in order,
 * reusing panes of an earlier `up` that still run. A setup command runs
 * inside the pane before its program; a prompt is typed into the program
 * once it is ready and never submitted. The plan is shared with
 * `paneflow up --dry-run`.
 *
 * @module
 */
import type { CapsGrant } from "../spec/caps.ts";
import { ErrorCode } from "../spec/codes.ts";
import { RpcError } from "../errors.ts";
import { launchers } from "../agents/launchers.ts";
import { launchHooks } from "../agents/per_launch.ts";
import { dirname, selfCommand } from "../paths.ts";
import type { Issue, ResolvedPane, ResolvedWorkspace, WorkspaceSpec } from "../spec/workspace.ts";
import type { Result } from "../spec/results.ts";
import { checkWorkspace, formatPath } from "./check.ts";
import { type PanePlan, planPanes } from "./plan.ts";
import { setupScript, WRAPPER_MARK } from "./setup_script.ts";
import { prefillSettled, readingTty } from "../agents/readiness.ts";
import type { PaneOptions, Registry, Surface, Workspace } from "../core/registry.ts";
import type { PanePool } from "../core/pane/pool.ts";
import type { Typist } from "../typing/mod.ts";
import type { Config } from "../spec/config.ts";
import { paneBaseEnv, paneShell } from "../core/pane/env.ts";
import { shimEnv } from "../tmux/shim.ts";
import { createWorktree, teardownWorktree, WorktreeManager, type WorktreePlan } from "./worktree.ts";

/** A pane of a `workspace.up` result. */
export type UpPane = UpResult["panes"][number];

/** The result of `workspace.up` (its schema in src/spec/results.ts). */
export type UpResult = Result<"workspace.up">;

/** Which `up` started a pane. */
export interface Origin {
  title: string;
  index: number;
  port: number | null;
  worktree: string | null;
}

interface UpState {
  manager: WorktreeManager;
  /** Panes this host brought up, by surface id. */
  origins: Map<number, Origin>;
  /** Per-launch hook files of agent panes, removed when the pane closes. */
  launchFiles: Map<number, string[]>;
  chain: Promise<unknown>;
}

/** What `up` needs of the host (the server's context is one). */
export interface UpHost {
  config: Config;
  registry: Registry;
  pool: PanePool;
  /** Types the prompt prefill (src/typing/). */
  typing: Pick<Typist, "write">;
  socketPath: string;
  log?: (line: string) => void;
}

const states = new WeakMap<object, UpState>();

/** Which `up` started a pane (title, place in the spec, port, worktree), or null: restore journals it. */
export function upOrigin(ctx: UpHost, surface: number): Origin | null {
  return states.get(ctx.registry)?.origins.get(surface) ?? null;
}

/**
 * A restored pane takes over the origin of the pane it replaces, so that a
 * later `up` of its workspace reuses it instead of clashing with its name.
 */
export function adoptUpOrigin(ctx: UpHost, surface: number, origin: Origin): void {
  stateFor(ctx).origins.set(surface, origin);
}

function log(ctx: UpHost, line: string) {
  if (ctx.log) ctx.log(line);
  else console.error(`paneflow: ${line}`);
}

function stateFor(ctx: UpHost): UpState {
  let st = states.get(ctx.registry);
  if (!st) {
    const state: UpState = {
      manager: new WorktreeManager(ctx.socketPath, (line) => log(ctx, line)),
      origins: new Map(),
      launchFiles: new Map(),
      chain: Promise.resolve(),
    };
    ctx.registry.closeListeners.add(async (closed) => {
      for (const s of closed) {
        state.origins.delete(s.id);
        for (const f of state.launchFiles.get(s.id) ?? []) await Deno.remove(f).catch(() => {});
        state.launchFiles.delete(s.id);
      }
      await state.manager.closed(closed.map((s) => s.id));
    });
    states.set(ctx.registry, state);
    st = state;
  }
  return st;
}

/** Whether `path` is a directory now. */
function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** Invalid spec: every problem with its key path, for the CLI to locate in the file. */
function specError(issues: Issue[]): RpcError {
  return new RpcError(
    ErrorCode.InvalidParams,
    `Invalid workspace spec: ${issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join("; ")}`,
    { reason: "invalid_spec", issues },
  );
}

/** `workspace.up`: one at a time per host, so re-runs never race into duplicates. */
export function workspaceUp(ctx: UpHost, params: WorkspaceSpec): Promise<UpResult> {
  const st = stateFor(ctx);
  const run = st.chain.then(() => up(ctx, st, params));
  st.chain = run.catch(() => {});
  return run;
}

/** Per-launch hooks for an agent pane (see src/agents/per_launch.ts). */
function perLaunch(ctx: UpHost, agent: string, paneEnv: Record<string, string>) {
  const dir = dirname(ctx.socketPath);
  try {
    return launchHooks(agent, {
      dir,
      self: selfCommand([]),
      env: { ...paneBaseEnv(ctx.config), ...paneEnv },
      id: crypto.randomUUID().slice(0, 8),
      fallbackDirs: [
        `${Deno.env.get("XDG_CACHE_HOME") || `${Deno.env.get("HOME") ?? "/"}/.cache`}/paneflow/launch`,
      ],
    });
  } catch (e) {
    log(ctx, `per-launch hooks for ${agent} not set up: ${(e as Error).message}`);
    return null;
  }
}

async function up(ctx: UpHost, st: UpState, params: WorkspaceSpec): Promise<UpResult> {
  const table = launchers(ctx.config);
  const { issues, workspace } = checkWorkspace(params, { agents: Object.keys(table) });
  if (!workspace) throw specError(issues);
  const reg = ctx.registry;
  const found = findReusable(reg, st, workspace);
  const plan = await planPanes(workspace, {
    launchers: table,
    baseEnv: paneBaseEnv(ctx.config),
    only: new Set(workspace.panes.filter((p) => !found.reused.has(p.index)).map((p) => p.index)),
    takenPorts: portsInUse(reg, st),
  });
  if (plan.issues.length) throw specError(plan.issues);
  const { target: ws, created, byIndex } = await createPanes(ctx, st, {
    workspace,
    panes: plan.panes,
    found,
  });

  const focus = workspace.panes.find((p) => p.focus);
  if (focus) reg.focus(byIndex.get(focus.index)!);
  else reg.select(reg.indexOf(ws));
  for (const p of plan.panes) {
    if (p.prompt === null) continue;
    const s = byIndex.get(p.index)!;
    prefill(ctx, s, p.prompt, { wrapped: p.setup !== null, setupSecs: p.setup_timeout_secs })
      .catch((e) => log(ctx, `prompt for pane ${s.id} not typed: ${(e as Error).message}`));
  }

  const planned = new Map(plan.panes.map((p) => [p.index, p]));
  const reused = found.reused;
  const panes: UpPane[] = workspace.panes.map((p: ResolvedPane) => {
    const s = byIndex.get(p.index)!;
    const pl = planned.get(p.index);
    const origin = st.origins.get(s.id);
    return {
      index: p.index,
      surface_id: s.id,
      name: s.name,
      agent: p.agent,
      command: pl ? pl.command : p.agent !== null ? table[p.agent] ?? null : p.command,
      cwd: s.cwd,
      worktree: origin?.worktree ?? pl?.worktree?.path ?? null,
      port: origin?.port ?? null,
      reused: reused.has(p.index),
      prompt: p.prompt === null ? null : reused.has(p.index) ? "skipped" : "pending",
    };
  });
  return {
    index: reg.indexOf(ws),
    title: ws.title,
    panes,
    surface_ids: reg.describeWorkspace(ws).surface_ids,
    created: created.map((s) => s.id),
    reused: [...reused.values()].map((s) => s.id),
  };
}

/** What an earlier `up` of the same workspace left that this one reuses or replaces. */
interface Reusable {
  /** The workspace the panes go to, if one is there already. */
  target: Workspace | null;
  /** Running panes of the earlier `up`, by their index in the spec. */
  reused: Map<number, Surface>;
  /** Exited panes of the earlier `up`, closed before new ones are created. */
  stale: Surface[];
}

/**
 * Panes of an earlier `up` that still run are reused: by name, or (unnamed)
 * by their place in the spec of a workspace with the same title. Throws the
 * names that clash with panes no `up` of this workspace started.
 */
function findReusable(reg: Registry, st: UpState, workspace: ResolvedWorkspace): Reusable {
  const live = [...reg.surfaces.values()];
  const target: Workspace | null = reg.workspaces.find((w) => w.title === workspace.name) ?? null;
  const reused = new Map<number, Surface>();
  const stale: Surface[] = [];
  const clashes: Issue[] = [];
  for (const p of workspace.panes) {
    const s = p.name !== null ? live.find((x) => x.name === p.name) : live.find((x) => {
      const o = st.origins.get(x.id);
      return x.workspace === target && x.name === null && o?.title === workspace.name && o.index === p.index;
    });
    if (!s) continue;
    // Names are unique on the host: a pane of that name that no `up` of this
    // workspace started is someone else's, neither reused nor replaced.
    if (st.origins.get(s.id)?.title !== workspace.name) {
      const ws = reg.workspaces[reg.indexOf(s.workspace)];
      clashes.push({
        path: ["panes", p.index, "name"],
        message: `"${p.name}" is already pane ${s.id} of workspace ${reg.indexOf(s.workspace)}` +
          ` ("${ws?.title ?? ""}"), which no earlier up of "${workspace.name}" started; rename one of them`,
      });
      continue;
    }
    if (s.exit) stale.push(s);
    else reused.set(p.index, s);
  }
  if (clashes.length) throw specError(clashes);
  return { target: target ?? reused.values().next().value?.workspace ?? null, reused, stale };
}

/** The ports held by running panes this host brought up. */
function portsInUse(reg: Registry, st: UpState): Set<number> {
  return new Set(
    [...st.origins.entries()]
      .filter(([id, o]) => o.port !== null && reg.surfaces.get(id)?.exit === null)
      .map(([, o]) => o.port!),
  );
}

/** What {@link createPanes} made: every pane of the spec by index, and the new ones. */
interface Created {
  target: Workspace;
  created: Surface[];
  byIndex: Map<number, Surface>;
}

/**
 * Closes the stale panes, then creates the planned worktrees and panes in
 * order. On any failure, closes what it created and removes the worktrees it
 * created, and throws one error that says so.
 */
async function createPanes(
  ctx: UpHost,
  st: UpState,
  job: { workspace: ResolvedWorkspace; panes: PanePlan[]; found: Reusable },
): Promise<Created> {
  const { workspace, found } = job;
  const reg = ctx.registry;
  const shell = paneShell(ctx.config);
  const created: Surface[] = [];
  const createdWorktrees: WorktreePlan[] = [];
  const byIndex = new Map<number, Surface>(found.reused);
  let target = found.target;
  try {
    for (const s of found.stale) await reg.closeSurface(s);
    if (target && reg.indexOf(target) < 0) target = null;
    const made = new Set<string>();
    for (const p of job.panes) {
      const cwd = await paneDirectory(ctx, p, { made, createdWorktrees });
      const { opts, hooks } = paneOptions(ctx, p, cwd, shell);
      let s: Surface;
      if (!target) {
        const r = await reg.createWorkspace({ ...opts, title: workspace.name, layout: workspace.layout });
        target = r.workspace;
        s = r.surface;
      } else {
        s = await reg.addPane(target, opts, null);
      }
      created.push(s);
      byIndex.set(p.index, s);
      if (hooks?.files.length) st.launchFiles.set(s.id, hooks.files);
      st.origins.set(s.id, {
        title: workspace.name,
        index: p.index,
        port: p.port,
        worktree: p.worktree?.path ?? null,
      });
      if (p.worktree) await st.manager.attach(p.worktree, s.id);
    }
  } catch (e) {
    for (const s of created.reverse()) await reg.closeSurface(s).catch(() => {});
    for (const wt of createdWorktrees) await teardownWorktree({ ...wt, teardown: "auto" }).catch(() => {});
    const message = e instanceof RpcError || e instanceof Error ? e.message : String(e);
    // A user error (a name clash, a vanished cwd) keeps its code: -32602, exit 2.
    const code = e instanceof RpcError && e.code !== ErrorCode.InternalError
      ? e.code
      : ErrorCode.InternalError;
    throw new RpcError(
      code,
      `Cannot bring up workspace "${workspace.name}": ${message}; what this call had created was closed again`,
      undefined,
      { cause: e },
    );
  }
  return { target: target!, created, byIndex };
}

/**
 * The directory a planned pane starts in, creating its worktree first (once
 * per path; those it created are added to `createdWorktrees`).
 */
async function paneDirectory(
  ctx: UpHost,
  p: PanePlan,
  worktrees: { made: Set<string>; createdWorktrees: WorktreePlan[] },
): Promise<string> {
  let cwd = p.cwd;
  if (p.worktree) {
    if (!worktrees.made.has(p.worktree.path)) {
      const r = await createWorktree(p.worktree);
      worktrees.made.add(p.worktree.path);
      if (r.created) worktrees.createdWorktrees.push(p.worktree);
      if (r.copied.length) log(ctx, `worktree ${p.worktree.path}: copied ${r.copied.join(", ")}`);
    }
    if (!isDirectory(cwd)) cwd = p.worktree.path;
  }
  // A directory removed since the spec was checked is the caller's problem (-32602), not ours.
  if (!isDirectory(cwd)) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      `panes[${p.index}]: the working directory ${cwd} does not exist (any more)`,
      { reason: "invalid_spec" },
    );
  }
  return cwd;
}

/** How a planned pane is started: its program (wrapped in its setup), environment and per-launch hooks. */
function paneOptions(
  ctx: UpHost,
  p: PanePlan,
  cwd: string,
  shell: string,
): { opts: PaneOptions; hooks: ReturnType<typeof perLaunch> } {
  const env = p.tmux_compat ? { ...shimEnv(ctx.socketPath, Deno.env), ...p.env } : p.env;
  const opts: PaneOptions = {
    cwd,
    env,
    ...(p.name !== null ? { name: p.name } : {}),
    ...(p.caps ? { caps: p.caps } : {}),
  };
  const wrapped = (command: string | null) => [
    "/bin/sh",
    "-c",
    setupScript({ setup: p.setup!, timeoutSecs: p.setup_timeout_secs, shell, command }),
  ];
  if (p.setup !== null) {
    opts.argv = wrapped(p.command);
    opts.shownArgv = p.command === null ? [shell] : [shell, "-c", p.command];
  } else if (p.command !== null) opts.command = p.command;
  const hooks = p.agent !== null && p.command !== null ? perLaunch(ctx, p.agent, p.env) : null;
  if (hooks) {
    if (hooks.env) opts.env = { ...opts.env, ...hooks.env };
    if (opts.command) opts.command += hooks.suffix;
    else if (opts.argv) opts.argv = wrapped(p.command + hooks.suffix);
  }
  return { opts, hooks };
}

/** Params of `surface.split` with a `managed_worktree`. */
export interface WorktreeSplit {
  direction: "h" | "v";
  target: Surface | null;
  branch: string;
  cwd?: string;
  command?: string;
  name?: string;
  env?: Record<string, string>;
  prompt?: string;
  caps?: CapsGrant;
}

/**
 * `surface.split` with `managed_worktree`: the pane runs in the managed
 * worktree `<repo>.worktrees/<branch>` of the repository its `cwd` is in,
 * planned, created, torn down and pruned exactly like an `up` pane's.
 */
export async function splitWithWorktree(ctx: UpHost, p: WorktreeSplit): Promise<Surface> {
  const st = stateFor(ctx);
  const reg = ctx.registry;
  const ws = p.target?.workspace ?? reg.workspaceAt();
  const pane = {
    cwd: p.cwd ?? ws.cwd,
    worktree: p.branch,
    ...(p.command !== undefined ? { command: p.command } : {}),
    ...(p.name !== undefined ? { name: p.name } : {}),
    ...(p.env !== undefined ? { env: p.env } : {}),
  };
  const { issues, workspace } = checkWorkspace({ panes: [pane] }, {});
  if (!workspace) throw specError(issues);
  const plan = await planPanes(workspace, {
    launchers: launchers(ctx.config),
    baseEnv: paneBaseEnv(ctx.config),
  });
  if (plan.issues.length) throw specError(plan.issues);
  const pl = plan.panes[0];
  const wt = pl.worktree!;
  await createWorktree(wt);
  let cwd = pl.cwd;
  try {
    if (!Deno.statSync(cwd).isDirectory) cwd = wt.path;
  } catch {
    cwd = wt.path;
  }
  const s = await reg.addPane(ws, {
    cwd,
    env: pl.env,
    ...(pl.command !== null ? { command: pl.command } : {}),
    ...(pl.name !== null ? { name: pl.name } : {}),
    ...(p.caps ? { caps: p.caps } : {}),
  }, { target: p.target?.id ?? ws.focused, direction: p.direction });
  await st.manager.attach(wt, s.id);
  if (p.prompt !== undefined) prefillPrompt(ctx, s, p.prompt);
  return s;
}

/**
 * Types `prompt` into a new pane once it is ready, as `workspace.up` does
 * (never submitted); for `workspace.create` and `surface.split`, which take
 * the same `prompt` field. Runs in the background; a failure is logged.
 */
export function prefillPrompt(ctx: UpHost, s: Surface, prompt: string): void {
  if (!prompt) return;
  prefill(ctx, s, prompt, { wrapped: false, setupSecs: 0 })
    .catch((e) => log(ctx, `prompt for pane ${s.id} not typed: ${(e as Error).message}`));
}

/** Typed anyway when output never settles within this long. */
const READY_DEADLINE_MS = 60_000;

function cmdline(pid: number): string | null {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`);
  } catch {
    return null;
  }
}

const tick = () => new Promise((r) => setTimeout(r, 50));

/**
 * Types `prompt` into a pane once its program is ready: after the setup
 * wrapper has handed over, when its first output has settled (or it reads
 * the terminal without printing). Never submits: no CR; newlines go in a
 * bracketed paste when the program asked for one, else become spaces.
 */
async function prefill(
  ctx: UpHost,
  s: Surface,
  prompt: string,
  o: { wrapped: boolean; setupSecs: number },
): Promise<void> {
  const gone = () => s.exit !== null || !ctx.registry.surfaces.has(s.id);
  if (o.wrapped) {
    const until = Date.now() + (o.setupSecs + 30) * 1000;
    while (!gone() && Date.now() < until) {
      const line = cmdline(s.pid);
      if (line !== null && !line.includes(WRAPPER_MARK)) break;
      await tick();
    }
    // Let the wrapper's last lines land before watching for the program's own output.
    await new Promise((r) => setTimeout(r, 200));
  }
  const launched = Date.now();
  const g0 = s.generation;
  while (!gone()) {
    const now = Date.now();
    if (now - launched > READY_DEADLINE_MS) break;
    const printed = s.generation > g0;
    if (
      prefillSettled({
        now,
        launched,
        printed,
        lastOutputAt: s.lastOutputAt,
        reading: () => readingTty(s.pid),
      })
    ) {
      break;
    }
    await tick();
  }
  if (gone()) return;
  // deno-lint-ignore no-control-regex
  const text = prompt.replace(/\r\n?/g, "\n").replace(/[\x00-\x08\x0b-\x1f\x7f]/g, "");
  let payload = text;
  let pasted = false;
  if (text.includes("\n")) {
    pasted = (await ctx.pool.modes(s.id)).bracketed_paste;
    if (!pasted) payload = text.replaceAll("\n", " ");
  }
  await ctx.typing.write(s, payload, pasted ? "bracketed" : "keys");
}
