/**
 * Restore: the journal a host keeps of its workspaces (src/restore/), the
 * `restore.*` methods' params and results, and the config section.
 * docs/restore.md describes them.
 *
 * This module imports zod: the CLI path must not import it.
 *
 * @module
 */
import { z } from "zod";

/** The journal's format; a journal of another version is set aside, not read. */
export const JOURNAL_VERSION = 1;

const Int = z.number().int();

const LayoutName = z.enum(["even_h", "even_v", "main_vertical", "tiled"]);

/** A split tree (the shape of src/core/layout.ts's). */
type Layout = { surface_id: number } | { direction: "h" | "v"; children: Layout[]; sizes?: number[] };

/** A split tree as the journal keeps it (leaves name the panes' old ids). */
const LayoutTree: z.ZodType<Layout> = z.lazy(() =>
  z.union([
    z.object({ surface_id: Int.min(1) }),
    z.object({
      direction: z.enum(["h", "v"]),
      children: z.array(LayoutTree).min(1),
      sizes: z.array(z.number().positive()).optional(),
    }),
  ])
);

/** What an agent pane ran: its family, its own argv and the conversation it had. */
export const JournalAgent = z.object({
  tool: z.string().min(1),
  /** The agent's own session id (Claude Code's session_id, Codex's thread id, ...). */
  session_id: z.string().min(1).nullable(),
  /** The agent process's argv as /proc showed it. */
  argv: z.array(z.string()).min(1),
});

/** One pane in the journal. */
export const JournalPane = z.object({
  surface_id: Int.min(1),
  name: z.string().nullable(),
  /** What the pane was created to run (without paneflow's wrappers). */
  argv: z.array(z.string()).min(1),
  /** The environment given at creation (not the host's, not PANEFLOW_*). */
  env: z.record(z.string(), z.string()),
  /** The foreground process's cwd when last read. */
  cwd: z.string().min(1),
  /** The foreground program when it was not the pane's own (a `less` in a shell). */
  foreground: z.array(z.string()).nullable(),
  agent: JournalAgent.nullable(),
  /** Restart the pane's program as it was, even when it is not a shell or an agent. */
  restart: z.boolean().default(false),
  exit_code: Int.nullable(),
  /** The history file in the journal's history directory (null: none kept). */
  history: z.string().nullable(),
  /** The `up` that started the pane: its workspace title, place in the spec, port, worktree. */
  up: z.object({
    title: z.string(),
    index: Int.min(0),
    port: Int.nullable(),
    worktree: z.string().nullable(),
  }).nullable().default(null),
  // Per-pane capabilities join here once the host grants them (docs/restore.md, "Not yet").
});

/** One workspace in the journal. */
export const JournalWorkspace = z.object({
  id: z.string(),
  title: z.string(),
  active: z.boolean(),
  preset: LayoutName.nullable(),
  layout: LayoutTree.nullable(),
  focused: Int.nullable(),
  cols: Int.min(2),
  rows: Int.min(2),
  cwd: z.string(),
  panes: z.array(JournalPane),
});

/** A host's journal: everything needed to rebuild its workspaces. */
export const Journal = z.object({
  version: z.literal(JOURNAL_VERSION),
  socket: z.string(),
  pid: Int,
  written_at: Int,
  workspaces: z.array(JournalWorkspace),
});

/** A journal, as read. */
export type Journal = z.infer<typeof Journal>;
/** A journal's workspace. */
export type JournalWorkspace = z.infer<typeof JournalWorkspace>;
/** A journal's pane. */
export type JournalPane = z.infer<typeof JournalPane>;

/** The config section `restore` (or its mode alone: `"restore": "on"`). */
export const RestoreConfig = z.preprocess(
  (v) => typeof v === "string" ? { mode: v } : v,
  z.strictObject({
    mode: z.enum(["off", "ask", "on"]).default("ask")
      .describe("off: no journal; ask: keep one, restore on `paneflow restore`; on: restore at start"),
    history_lines: z.number().int().min(0).max(100_000).default(2000)
      .describe("Lines of each pane's history kept and shown again above a marker (0: none)"),
  }),
).prefault({});

const Selection = {
  workspaces: z.array(z.string().min(1).max(256)).max(1000).optional()
    .describe("Workspace titles or journal ids (w<n>) to restore; default all"),
};

/** The `restore.*` methods. */
export const restoreMethods = {
  "restore.plan": z.strictObject(Selection).describe("What `restore.run` would bring back, per pane"),
  "restore.run": z.strictObject(Selection).describe("Brings back the last host's workspaces"),
} as const;

/** One pane of a restore plan. */
export const PanePlan = z.object({
  name: z.string().nullable(),
  was_surface_id: Int,
  cwd: z.string(),
  argv: z.array(z.string()).describe("What the pane will run"),
  how: z.enum(["shell", "resume", "restart", "same"])
    .describe("shell: a shell in the cwd; resume: the agent's own resume; restart/same: the command again"),
  agent: z.string().nullable(),
  session_id: z.string().nullable(),
  note: z.string().nullable().describe("The line shown in the pane about what ran there"),
  problem: z.string().nullable().describe("Why the pane comes back as a shell"),
  history_lines: Int,
  surface_id: Int.nullable().describe("The new pane (restore.run)"),
});

/** One workspace of a restore plan. */
export const WorkspacePlan = z.object({
  id: z.string(),
  title: z.string(),
  panes: z.array(PanePlan),
  skipped: z.string().nullable().describe("Why this workspace does not come back"),
});

/** What a restored pane shows of the last host (`surface.list`'s `restored`). */
export const RestoredMark = z.object({
  history_lines: Int.describe("Lines of the last host's history at the top of the pane"),
  marker: z.string().describe("The line after them (empty when no history came back)"),
  how: PanePlan.shape.how,
  note: z.string().nullable(),
});

/** The results of the `restore.*` methods. */
export const restoreResults = {
  "restore.plan": z.object({
    journal: z.string().nullable().describe("The journal read (null: there is none)"),
    written_at: Int.nullable(),
    problem: z.string().nullable().describe("Why the journal could not be read (it was set aside)"),
    workspaces: z.array(WorkspacePlan),
  }),
  "restore.run": z.object({
    journal: z.string().nullable(),
    written_at: Int.nullable(),
    problem: z.string().nullable(),
    workspaces: z.array(WorkspacePlan),
  }),
};

/** A plan's pane. */
export type PanePlan = z.infer<typeof PanePlan>;
/** A plan's workspace. */
export type WorkspacePlan = z.infer<typeof WorkspacePlan>;
