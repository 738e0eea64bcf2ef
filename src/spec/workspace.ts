/**
 * The workspace spec of `paneflow up` (docs/up.md): the TOML file
 * format and the `workspace.up` params (the same shape once paths are
 * resolved), the resolved workspace and the issue types. Schemas, types and
 * constants only: the checking (every problem at once, located by file,
 * line, column and key) is src/up/check.ts's.
 *
 * @module
 */
import { z } from "zod";
import { CapsGrant } from "./caps.ts";

/** Layout presets (docs/up.md). */
export const Layout = z.enum(["even_h", "even_v", "main_vertical", "tiled"]);
const EnvValue = z.union([z.string(), z.number(), z.boolean()]);

/** One `[[panes]]` entry. */
export const PaneSpec = z.strictObject({
  name: z.string().min(1).optional().describe("Stable selector name, unique on the host"),
  cwd: z.string().min(1).optional().describe(
    "Working directory; in workspace.up params an absolute path",
  ),
  agent: z.string().min(1).optional().describe("Agent launcher name; exclusive with command"),
  command: z.string().min(1).optional().describe("Shell command; exclusive with agent"),
  prompt: z.string().optional().describe("Typed into the program once it is ready, never submitted"),
  focus: z.boolean().optional(),
  env: z.record(z.string(), EnvValue).optional().describe("Merged over terminal.env; ${port_offset} allowed"),
  worktree: z.string().min(1).optional().describe(
    "Branch of a managed worktree at <repo>.worktrees/<branch>",
  ),
  copy_env: z.boolean().optional().describe("Copy the repo's gitignored .env* files (default true)"),
  setup: z.string().min(1).optional().describe("Shell command run in the pane before its program"),
  setup_timeout_secs: z.number().int().min(1).max(86_400).optional(),
  worktree_teardown: z.enum(["auto", "keep"]).optional(),
  caps: CapsGrant.optional().describe("What the pane may do through the socket (docs/security.md)"),
  tmux_compat: z.boolean().optional().describe("TMUX, TMUX_PANE and the tmux shim on PATH (docs/tmux.md)"),
});

/** A workspace spec: the TOML file, and the params of `workspace.up`. */
export const WorkspaceSpec = z.strictObject({
  name: z.string().min(1).optional().describe('Workspace title (default "Workspace")'),
  layout: Layout.optional(),
  port_base: z.number().int().min(1).max(65_535).optional(),
  tmux_compat: z.boolean().optional().describe("Every pane's default for tmux_compat"),
  panes: z.array(PaneSpec).min(1),
});

/** A workspace spec as written (after the schema check). */
export type WorkspaceSpec = z.infer<typeof WorkspaceSpec>;

/** A managed worktree of a pane. */
export interface WorktreeSpec {
  branch: string;
  /** The main worktree of the repository. */
  repo: string;
  /** `<repo>.worktrees/<branch>`. */
  path: string;
  /** The pane's directory relative to the repository root ("" at the root). */
  subdir: string;
  copy_env: boolean;
  teardown: "auto" | "keep";
}

/** A pane with defaults applied and paths resolved. */
export interface ResolvedPane {
  index: number;
  name: string | null;
  /** Canonical directory (in the repository; see `worktree` for where it runs). */
  cwd: string;
  agent: string | null;
  command: string | null;
  prompt: string | null;
  focus: boolean;
  /** Values as strings, `${port_offset}` not yet substituted. */
  env: Record<string, string>;
  worktree: WorktreeSpec | null;
  setup: string | null;
  setup_timeout_secs: number;
  /** Its capability grant (src/caps/), when the spec gives one. */
  caps?: z.infer<typeof CapsGrant>;
  /** TMUX, TMUX_PANE and the tmux shim first on PATH (docs/tmux.md). */
  tmux_compat: boolean;
}

/** A workspace with defaults applied and paths resolved. */
export interface ResolvedWorkspace {
  name: string;
  layout: z.infer<typeof Layout>;
  port_base: number;
  panes: ResolvedPane[];
}

/** One problem, at a key path. */
export interface Issue {
  path: (string | number)[];
  message: string;
}

/** One problem, located in a file. */
export interface LocatedIssue extends Issue {
  file: string;
  line: number;
  column: number;
}

/** Default of `setup_timeout_secs`. */
export const DEFAULT_SETUP_TIMEOUT_SECS = 300;
/** The only substitution token (env values only). */
export const PORT_TOKEN = "${port_offset}";

/**
 * Why a pane name cannot be used, or null: the host's rules, checked by `up`
 * and flows before anything is created and by the host on every rename.
 */
export function nameProblem(name: string): string | null {
  if (name.trim() === "") return "a pane name cannot be empty";
  if (/\p{Cc}/u.test(name)) return "a pane name cannot contain control characters";
  if (name.length > 256) return "a pane name is at most 256 characters";
  if (/^\d+$/.test(name) || /^(cmdline|cwd):/.test(name)) {
    return `"${name}" would read as a selector; pick a name with a letter`;
  }
  return null;
}
