/**
 * Checking a workspace spec (src/spec/workspace.ts): every problem is
 * reported at once, each naming the file, line, column and key; nothing is
 * created unless the whole spec is valid.
 *
 * Validation checks what can be known without running anything: types and
 * unknown keys, exclusive fields, directories (after `~` and `$VAR` expansion
 * and canonicalization), unique names, `${...}` tokens, branch names and
 * that a worktree's `cwd` lies in a git repository. The host adds what needs
 * git or its config (launchers, branches checked out elsewhere) and returns
 * those problems as key paths that the CLI locates the same way.
 *
 * @module
 */
import { capsIssues } from "../caps/check.ts";
import type { CapsGrant } from "../spec/caps.ts";
import { UsageError } from "../errors.ts";
import { type KeyPath, type Locator, parseTomlFile } from "../toml_locate.ts";
import { zodIssues } from "../issue_words.ts";
import {
  DEFAULT_SETUP_TIMEOUT_SECS,
  type Issue,
  type LocatedIssue,
  nameProblem,
  PaneSpec,
  type ResolvedPane,
  type ResolvedWorkspace,
  WorkspaceSpec,
  type WorktreeSpec,
} from "../spec/workspace.ts";

/** The spec is invalid: carries every problem. */
export class WorkspaceSpecError extends UsageError {
  override name = "WorkspaceSpecError";
  constructor(readonly issues: LocatedIssue[]) {
    super(issues.map(formatIssue).join("\n"));
  }
}

const PANE_KEYS = Object.keys(PaneSpec.shape);
const TOP_KEYS = Object.keys(WorkspaceSpec.shape);

/** Renders a key path the way it reads in TOML: `panes[1].env.PORT`. */
export function formatPath(path: KeyPath): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += (out ? "." : "") + (/^[A-Za-z0-9_-]+$/.test(seg) ? seg : JSON.stringify(seg));
  }
  return out || "(top level)";
}

/** `file:line:column: key: message`. */
export function formatIssue(i: LocatedIssue): string {
  const where = `${i.file}:${i.line}:${i.column}`;
  // One line per issue even when a value quoted in the message holds a line break (parser fuzz).
  const message = i.message.replace(/\r?\n|\r/g, "\\n");
  return i.path.length ? `${where}: ${formatPath(i.path)}: ${message}` : `${where}: ${message}`;
}

/** Attaches file positions to issues and sorts them by position. */
export function locateIssues(issues: Issue[], file: string, locate: Locator): LocatedIssue[] {
  return issues
    .map((i) => ({ ...i, file, ...locate(i.path) }))
    .sort((a, b) => a.line - b.line || a.column - b.column);
}

/** Schema problems, in our words. */
function schemaIssues(raw: unknown): Issue[] {
  const parsed = WorkspaceSpec.safeParse(raw);
  if (parsed.success) return [];
  // A pane's `caps` has its own checker, with its own words (src/caps/check.ts), run per pane.
  const rest = parsed.error.issues.filter((i) => !(i.path[0] === "panes" && i.path[2] === "caps"));
  return zodIssues(raw, rest, {
    tables: "panes",
    knownKeys: (path) => path.length === 0 ? TOP_KEYS : PANE_KEYS,
  });
}

/** Environment lookup (injectable for tests). */
export type Env = { get(key: string): string | undefined };

/** Options for {@link checkWorkspace}. */
export interface CheckOptions {
  /** Directory that relative `cwd`s and missing `cwd`s resolve against; without it `cwd` must be absolute. */
  baseDir?: string;
  /** For `~` and `$VAR` in `cwd` (default: this process's environment). */
  env?: Env;
  /** Known agent launchers; when given, `agent` must name one. */
  agents?: string[];
  /**
   * The pane names `caps` selectors must match (default: the spec's own);
   * null: selectors are not matched here (a flow's panes are spread over its steps).
   */
  paneNames?: string[] | null;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TOKEN = /\$\{([^}]*)(\}|$)/g;

/** Why a string is not a valid git branch name, or null (git check-ref-format, simplified). */
export function branchProblem(b: string): string | null {
  if (b.startsWith("-")) return 'cannot start with "-"';
  if (b === "@" || b.includes("@{")) return 'cannot be "@" or contain "@{"';
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(b)) return "cannot contain spaces or any of ~ ^ : ? * [ \\";
  if (b.includes("..")) return 'cannot contain ".."';
  if (b.startsWith("/") || b.endsWith("/") || b.includes("//")) {
    return 'cannot start or end with "/" or contain "//"';
  }
  if (b.endsWith(".") || b.endsWith(".lock")) return 'cannot end with "." or ".lock"';
  if (b.split("/").some((c) => c.startsWith("."))) return 'no part of it can start with "."';
  return null;
}

function tokenIssues(value: string, path: Issue["path"], inEnv: boolean): Issue[] {
  const out: Issue[] = [];
  for (const m of value.matchAll(TOKEN)) {
    const token = m[0];
    if (!m[2]) {
      out.push({ path, message: `unterminated "${token}": write \${port_offset} or drop the "\${"` });
    } else if (m[1] === "port_offset") {
      if (!inEnv) {
        out.push({
          path,
          message:
            `\${port_offset} is substituted in env values only; set env = { PORT = "\${port_offset}" } and use $PORT here`,
        });
      }
    } else if (inEnv) {
      out.push({ path, message: `"${token}" is not substituted; env values take only \${port_offset}` });
    } else {
      out.push({
        path,
        message: `"${token}" is not substituted in a workspace spec (only env values take \${port_offset})${
          /^[A-Za-z_][A-Za-z0-9_]*$/.test(m[1]) ? `; write $${m[1]} to let the shell expand it` : ""
        }`,
      });
    }
  }
  return out;
}

/** Expands `~`, `~/...` and `$VAR` in a directory; returns the path or a problem. */
export function expandDir(dir: string, env: Env): { path: string } | { problem: string } {
  let out = dir;
  if (out === "~" || out.startsWith("~/")) {
    const home = env.get("HOME");
    if (!home) return { problem: `cannot expand "~": HOME is not set` };
    out = home + out.slice(1);
  } else if (out.startsWith("~")) {
    return { problem: `"${dir}": only "~" and "~/" are expanded, not "~user"` };
  }
  let missing: string | null = null;
  out = out.replace(/\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    const v = env.get(name);
    if (v === undefined) missing ??= name;
    return v ?? "";
  });
  if (missing) return { problem: `variable $${missing} in "${dir}" is not set` };
  return { path: out };
}

function join(base: string, rel: string): string {
  return rel.startsWith("/") ? rel : `${base.replace(/\/$/, "")}/${rel}`;
}

function dirnameOf(p: string): string {
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

/**
 * The main worktree of the git repository containing `dir`, or null. Reads
 * `.git` entries only (no git process): a `.git` directory marks the root; a
 * `.git` file points into the main repository's `.git/worktrees/<name>`
 * (a linked worktree) or `.git/modules/<name>` (a submodule: its own root).
 */
export function findRepoRoot(dir: string): string | null {
  let d = dir;
  while (true) {
    const dotgit = `${d === "/" ? "" : d}/.git`;
    let info: Deno.FileInfo | null = null;
    try {
      info = Deno.statSync(dotgit);
    } catch { /* keep walking */ }
    if (info?.isDirectory) return d;
    if (info?.isFile) {
      try {
        const m = /^gitdir:\s*(.+?)\s*$/m.exec(Deno.readTextFileSync(dotgit));
        if (!m) return d;
        const gitdir = join(d, m[1]);
        let common: string;
        try {
          common = join(gitdir, Deno.readTextFileSync(`${gitdir}/commondir`).trim());
        } catch {
          return d;
        }
        const real = Deno.realPathSync(common);
        return real.endsWith("/.git") ? dirnameOf(real) : d;
      } catch {
        return d;
      }
    }
    if (d === "/") return null;
    d = dirnameOf(d);
  }
}

/**
 * Checks a spec that may not match the schema yet and resolves it. Returns
 * every problem (schema and meaning) or the resolved workspace.
 */
export function checkWorkspace(
  raw: unknown,
  opts: CheckOptions = {},
): { issues: Issue[]; workspace: ResolvedWorkspace | null } {
  const issues = schemaIssues(raw);
  const top = asTable(raw) ?? {};
  if (typeof top.name === "string") issues.push(...tokenIssues(top.name, ["name"], false));
  const specNames = opts.paneNames !== undefined
    ? opts.paneNames
    : (Array.isArray(top.panes) ? top.panes : []).flatMap((p) => {
      const name = asTable(p)?.name;
      return typeof name === "string" ? [name] : [];
    });
  const scan: PaneScan = {
    issues,
    opts,
    lookup: opts.env ?? Deno.env,
    names: new Map(),
    focused: null,
    specNames,
    tmuxCompat: top.tmux_compat === true,
  };
  const panes: ResolvedPane[] = [];
  (Array.isArray(top.panes) ? top.panes : []).forEach((p: unknown, index: number) => {
    const pane = asTable(p);
    const resolved = pane && checkPane(pane, index, scan);
    if (resolved) panes.push(resolved);
  });
  if (issues.length) return { issues, workspace: null };
  return {
    issues,
    workspace: {
      name: typeof top.name === "string" ? top.name : "Workspace",
      layout: (typeof top.layout === "string" ? top.layout : "even_h") as ResolvedWorkspace["layout"],
      port_base: typeof top.port_base === "number" ? top.port_base : 3000,
      panes,
    },
  };
}

/** A TOML table as a record, or null for any other value. */
function asTable(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : null;
}

/** What checking one pane shares with the others: the problems so far, the names and focus seen. */
interface PaneScan {
  issues: Issue[];
  opts: CheckOptions;
  lookup: Env;
  /** Each pane name and the index of the first pane that has it. */
  names: Map<string, number>;
  /** The index of the first pane with `focus = true`. */
  focused: number | null;
  /** The names `caps` selectors must match; null: not matched here. */
  specNames: string[] | null;
  /** The workspace's `tmux_compat`, every pane's default. */
  tmuxCompat: boolean;
}

/** One pane table's problems (added to `scan.issues`), and the pane resolved when it has a directory. */
function checkPane(pane: Record<string, unknown>, index: number, scan: PaneScan): ResolvedPane | null {
  const { issues, opts } = scan;
  const key = (k: string) => ["panes", index, k];
  const str = (k: string) => (typeof pane[k] === "string" ? (pane[k] as string) : null);
  for (const k of ["name", "cwd", "agent", "command", "prompt", "worktree", "setup"]) {
    const v = str(k);
    if (v !== null) issues.push(...tokenIssues(v, key(k), false));
  }
  const agent = str("agent");
  const command = str("command");
  if (agent !== null && command !== null) {
    issues.push({
      path: key("agent"),
      message: `"agent" and "command" are exclusive: an agent pane runs its launcher's command; keep one`,
    });
  }
  if (agent !== null && opts.agents && !opts.agents.includes(agent)) {
    issues.push({
      path: key("agent"),
      message: `unknown agent "${agent}"; known launchers: ${
        opts.agents.join(", ")
      } (add others as agents.<name>.command in the config)`,
    });
  }
  const name = str("name");
  checkUnique(pane, name, index, scan);
  const env = paneEnv(pane.env, index, issues);
  const worktree = str("worktree");
  issues.push(...optionIssues(pane, worktree, key));
  issues.push(...capsIssues(pane.caps, key("caps"), scan.specNames));
  const cwd = resolveCwd(pane.cwd, key("cwd"), scan);
  if (cwd === null) return null;
  return {
    index,
    name: name || null,
    cwd,
    agent,
    command,
    prompt: str("prompt"),
    focus: pane.focus === true,
    env,
    worktree: worktree !== null && !branchProblem(worktree)
      ? worktreeOf(pane, worktree, cwd, key("worktree"), issues)
      : null,
    setup: str("setup"),
    setup_timeout_secs: typeof pane.setup_timeout_secs === "number"
      ? pane.setup_timeout_secs
      : DEFAULT_SETUP_TIMEOUT_SECS,
    ...(pane.caps !== undefined ? { caps: pane.caps as CapsGrant } : {}),
    tmux_compat: typeof pane.tmux_compat === "boolean" ? pane.tmux_compat : scan.tmuxCompat,
  };
}

/** A pane's name must be usable and unique, and only one pane may have focus. */
function checkUnique(
  pane: Record<string, unknown>,
  name: string | null,
  index: number,
  scan: PaneScan,
): void {
  const { issues, names } = scan;
  if (name !== null && name !== "") {
    const problem = nameProblem(name);
    if (problem) issues.push({ path: ["panes", index, "name"], message: problem });
    const first = names.get(name);
    if (first !== undefined) {
      issues.push({
        path: ["panes", index, "name"],
        message: `"${name}" is already the name of panes[${first}]`,
      });
    } else names.set(name, index);
  }
  if (pane.focus === true) {
    if (scan.focused !== null) {
      issues.push({
        path: ["panes", index, "focus"],
        message: `only one pane can have focus = true (panes[${scan.focused}] has it)`,
      });
    } else scan.focused = index;
  }
}

/** A pane's `env` as strings; bad variable names and misplaced tokens go to `issues`. */
function paneEnv(env: unknown, index: number, issues: Issue[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(asTable(env) ?? {})) {
    if (!ENV_NAME.test(k)) {
      issues.push({
        path: ["panes", index, "env", k],
        message:
          `"${k}" is not a valid environment variable name (letters, digits and _; not starting with a digit)`,
      });
    }
    if (typeof v === "string") issues.push(...tokenIssues(v, ["panes", index, "env", k], true));
    if (["string", "number", "boolean"].includes(typeof v)) out[k] = String(v);
  }
  return out;
}

/** Options given without what they apply to, and a `worktree` that is not a valid branch name. */
function optionIssues(
  pane: Record<string, unknown>,
  worktree: string | null,
  key: (k: string) => Issue["path"],
): Issue[] {
  const out: Issue[] = [];
  if (worktree === null) {
    for (const k of ["copy_env", "worktree_teardown"]) {
      if (pane[k] !== undefined) out.push({ path: key(k), message: `only applies with "worktree"` });
    }
  } else {
    const problem = branchProblem(worktree);
    if (problem) {
      out.push({ path: key("worktree"), message: `"${worktree}" is not a valid branch name: ${problem}` });
    }
  }
  if (pane.setup_timeout_secs !== undefined && pane.setup === undefined) {
    out.push({ path: key("setup_timeout_secs"), message: `only applies with "setup"` });
  }
  return out;
}

/**
 * The pane's directory: expanded, resolved against the spec's directory,
 * canonical; null (with its problem in `scan.issues`, unless the schema or
 * token checks name it already) when there is none.
 */
function resolveCwd(given: unknown, path: Issue["path"], scan: PaneScan): string | null {
  const { issues, opts } = scan;
  if (given === undefined) {
    if (opts.baseDir) return opts.baseDir;
    issues.push({ path, message: "is required (an absolute path)" });
    return null;
  }
  if (typeof given !== "string" || given === "" || given.includes("${")) return null;
  const expanded = expandDir(given, scan.lookup);
  if ("problem" in expanded) {
    issues.push({ path, message: expanded.problem });
    return null;
  }
  if (!expanded.path.startsWith("/") && !opts.baseDir) {
    issues.push({ path, message: `"${given}" must be an absolute path` });
    return null;
  }
  const full = join(opts.baseDir ?? "/", expanded.path);
  try {
    const info = Deno.statSync(full);
    if (info.isDirectory) return Deno.realPathSync(full);
    issues.push({ path, message: `"${full}" is not a directory` });
  } catch {
    issues.push({ path, message: `directory "${full}" does not exist` });
  }
  return null;
}

/** Where a pane's worktree goes, or null (with the problem in `issues`) when `cwd` is in no repository. */
function worktreeOf(
  pane: Record<string, unknown>,
  branch: string,
  cwd: string,
  path: Issue["path"],
  issues: Issue[],
): WorktreeSpec | null {
  const repo = findRepoRoot(cwd);
  if (!repo) {
    issues.push({ path, message: `needs cwd inside a git repository; "${cwd}" is not in one` });
    return null;
  }
  const realRepo = Deno.realPathSync(repo);
  return {
    branch,
    repo: realRepo,
    path: `${realRepo}.worktrees/${branch}`,
    subdir: cwd.startsWith(realRepo + "/") ? cwd.slice(realRepo.length + 1) : "",
    copy_env: pane.copy_env !== false,
    teardown: pane.worktree_teardown === "keep" ? "keep" : "auto",
  };
}

/** Options for {@link parseWorkspaceToml}. */
export interface ParseOptions extends Omit<CheckOptions, "baseDir"> {
  /** The file's path: relative `cwd`s resolve against its directory. */
  path: string;
  /** How errors name the file (default: `path`). */
  display?: string;
}

/** What a valid TOML workspace file gives. */
export interface ParsedWorkspace {
  /** The spec with every `cwd` absolute and canonical: the `workspace.up` params. */
  spec: WorkspaceSpec;
  workspace: ResolvedWorkspace;
  /** Finds a key path in the file (for problems the host reports later). */
  locate: Locator;
}

/** Parses and checks a workspace file's text; throws {@link WorkspaceSpecError} with every problem. */
export async function parseWorkspaceToml(text: string, opts: ParseOptions): Promise<ParsedWorkspace> {
  const file = opts.display ?? opts.path;
  const parsed = await parseTomlFile(text, opts.path, file);
  if (!parsed.ok) throw new WorkspaceSpecError([parsed.issue]);
  const { raw, locate, baseDir } = parsed;
  const { issues, workspace } = checkWorkspace(raw, { ...opts, baseDir });
  if (!workspace) throw new WorkspaceSpecError(locateIssues(issues, file, locate));
  const spec = JSON.parse(JSON.stringify(raw)) as WorkspaceSpec;
  for (const p of workspace.panes) spec.panes[p.index].cwd = p.cwd;
  return { spec, workspace, locate };
}
