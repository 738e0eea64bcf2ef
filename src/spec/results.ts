/**
 * What the host answers, per method family: the result schema of every method (paneflow's families
 * and ptywright's `server.*`, `session.*`, `adapter.*`, `plugin.*`). Params are in ./protocol.ts and
 * ./ptywright.ts, events in ./events.ts, the error tables in ./errors.ts (capabilities' in ./caps.ts).
 * `deno task docs` renders them into docs/protocol.md; tests/protocol_results_test.ts checks real
 * replies against these schemas. An object schema lists every field the host sends; a field that
 * only comes in some replies is optional. Clients import the inferred types with `import type` (the
 * CLI stays free of zod). This module imports zod: the CLI path must not import it.
 *
 * @module
 */
import { z } from "zod";
import { CallerDescription, CapsStats, PaneCaps, RefusedCalls } from "./caps.ts";
import { FleetSpend, UsageBudgetResult, UsageResult } from "./usage.ts";
import type { LayoutTree, Method } from "./protocol.ts";
import type { PluginMethod, PwMethod } from "./ptywright.ts";
import { RestoredMark, restoreResults } from "./restore.ts";
import { notifyResults as notify } from "./notify.ts";
import { adapter, plugin, server, session } from "./ptywright_results.ts";
export { AdapterState, MatchOutcome, PluginManifest, ScreenSnapshot } from "./ptywright_results.ts";

const Int = z.number().int();
const Id = Int.min(1).describe("Pane id (surface_id)");
const Nullable = <T extends z.ZodType>(t: T) => t.nullable();

/** A pane as `surface.list`, `surface.split`, `surface.rename` and `surface.focus` describe it. */
export const PaneDescription = z.object({
  surface_id: Id,
  name: Nullable(z.string()),
  title: z.string(),
  cwd: Nullable(z.string()),
  cmd: z.string().describe("The foreground process's argv, joined"),
  argv: z.array(z.string()),
  workspace: Int.describe("Index of the pane's workspace"),
  pid: Int,
  focused: z.boolean(),
  cols: Int,
  rows: Int,
  output_generation: Int,
  exited: z.boolean(),
  exit_code: Nullable(Int),
  exit_signal: Nullable(Int),
  session: z.string().optional().describe("The ptywright session id, for a pane made by session.create"),
  adapter: z.string().optional().describe("The adapter driving the pane (adapter.start)"),
  adapter_plugin: z.string().optional().describe("The adapter's plugin"),
  adapter_state: Nullable(z.string()).optional().describe("The adapter's last classified state"),
  caps: PaneCaps,
  restored: RestoredMark.optional().describe("What a restored pane shows of the last host (docs/restore.md)"),
});

/** A split tree, as `layout_tree` gives it. */
const LayoutTreeOut: z.ZodType<LayoutTree> = z.lazy(() =>
  z.union([
    z.object({ surface_id: Id }),
    z.object({
      direction: z.enum(["h", "v"]),
      children: z.array(LayoutTreeOut),
      sizes: z.array(z.number()).optional(),
    }),
  ])
);

/** A workspace as `workspace.list` and the workspace methods describe it. */
export const WorkspaceDescription = z.object({
  index: Int,
  id: z.string().describe("Stable id w<N>: the index shifts when an earlier workspace closes"),
  title: z.string(),
  active: z.boolean(),
  layout: z.string().describe('A preset name, or "custom"'),
  layout_tree: Nullable(LayoutTreeOut).describe("null while the workspace's first pane starts"),
  surface_ids: z.array(Id),
  focused_surface_id: Nullable(Id),
  cols: Int,
  rows: Int,
});

/** The agent states (src/agents/classify.ts). */
export const AgentStateName = z.enum([
  "thinking",
  "waiting_for_input",
  "finished",
  "errored",
  "stalled",
  "idle",
  "unknown_running",
]);

/** A pane's agent status: `surface.status`, `fleet.list` items, the `ai.*` replies. */
export const AgentStatus = z.object({
  surface_id: Id,
  surface_name: Nullable(z.string()),
  workspace: Int,
  pid: Nullable(Int),
  tool: Nullable(z.string()),
  state: AgentStateName,
  hooked: z.boolean(),
  reason: z.string(),
  active_tool_name: Nullable(z.string()),
  message: Nullable(z.string()),
  last_result: Nullable(z.string()),
  waiting_ms: Int,
  idle_ms: Int,
  output_generation: Int,
  dialog_id: Nullable(z.string()).describe(
    "The dialog on screen (a permission dialog, a trust dialog): pass it to surface.answer",
  ),
});

const Ok = z.object({ ok: z.literal(true) });
const Changed = z.object({ line: Int, text: z.string() });
/** A row's place without its text (which a fenced reply holds inside the fence). */
const Where = z.object({ line: Int });
/** The fields of every `surface.read` reply. */
const Read = {
  surface_id: Id,
  text: z.string(),
  lines: Int,
  total_lines: Int,
  eof: z.boolean(),
  output_generation: Int,
  since: Int.optional(),
  reset: z.boolean().optional().describe("With since: no snapshot of that generation was kept"),
};

const system = {
  "system.ping": z.object({ pong: z.literal(true), ts: Int }),
  "system.identify": z.object({
    name: z.literal("paneflow"),
    version: z.string(),
    protocol: Int,
    pid: Int,
    socket: z.string(),
    started_at: Int,
    caller: CallerDescription.describe("Who this connection is and what it may do"),
  }),
  "system.capabilities": z.object({
    scripting: z.boolean(),
    keystrokes: z.boolean(),
    ai_unrestricted: z.boolean(),
    fence: z.boolean(),
    methods: z.array(z.string()).describe("The methods this connection may call (gated ones only when open)"),
  }),
  "system.hello": Ok,
  "system.clients": z.object({
    clients: z.array(z.object({
      id: Int,
      kind: z.string(),
      name: Nullable(z.string()),
      pid: Nullable(Int),
      verb: Nullable(z.string()),
      age_ms: Int,
      stream: z.boolean(),
      self: z.boolean(),
    })),
  }),
  "system.stats": z.object({
    rss: Int,
    fds: Nullable(Int),
    heap_used: Int,
    heap_total: Int,
    workers: z.array(
      z.object({
        heap_used: Int,
        heap_total: Int,
        panes: Int,
        trims: Int,
        trim_ms: Int,
        watched: z.boolean(),
        pacing: z.boolean(),
        jump_rows: Int,
      }),
    ),
    bus: Nullable(z.object({ subscribers: Int, max_queue: Int })),
    connections: z.object({ calls: Nullable(Int), streams: Nullable(Int) }),
    panes: Int,
    caps: CapsStats,
  }),
  "system.shutdown": Ok,
};

const workspace = {
  "workspace.list": z.object({ workspaces: z.array(WorkspaceDescription) }),
  "workspace.current": WorkspaceDescription,
  "workspace.create": WorkspaceDescription.extend({ surface_id: Id.describe("The first pane") }),
  "workspace.select": WorkspaceDescription,
  "workspace.rename": WorkspaceDescription,
  "workspace.close": z.object({ closed: Int.describe("Index the workspace had") }),
  "workspace.up": z.object({
    index: Int,
    title: z.string(),
    panes: z.array(z.object({
      index: Int,
      surface_id: Id,
      name: Nullable(z.string()),
      agent: Nullable(z.string()),
      command: Nullable(z.string()),
      cwd: z.string(),
      worktree: Nullable(z.string()),
      port: Nullable(Int),
      reused: z.boolean(),
      prompt: Nullable(z.enum(["pending", "skipped"]))
        .describe('"pending" until typed; "skipped" for a reused pane; null without a prompt'),
    })),
    surface_ids: z.array(Id),
    created: z.array(Id),
    reused: z.array(Id),
  }),
  "workspace.restore_layout": WorkspaceDescription,
};

/** What every `surface.screen` reply carries. */
const ScreenHead = z.object({
  surface_id: Id,
  title: z.string(),
  exited: z.boolean(),
  exit_code: Nullable(Int),
});

const surface = {
  "surface.list": z.object({ surfaces: z.array(PaneDescription) }),
  // With the fence on no field outside the fence carries pane text: the rows a `since` read
  // found are in the fenced `text`, one a line, and `changed` says only where they are.
  "surface.read": z.union([
    z.object({
      ...Read,
      fenced: z.literal(true),
      changed: z.array(Where).optional()
        .describe(
          "With since: where the rows added or changed are (their text is inside the fence, in this order)",
        ),
    }),
    z.object({
      ...Read,
      fenced: z.literal(false),
      changed: z.array(Changed).optional().describe("With since: the rows added or changed"),
    }),
  ]),
  "surface.screen": z.discriminatedUnion("unchanged", [
    ScreenHead.extend({
      unchanged: z.literal(true).describe("The caller's since is current: the screen fields are left out"),
      generation: Int,
    }),
    ScreenHead.extend({
      unchanged: z.literal(false),
      ansi: z.string(),
      cols: Int,
      rows: Int,
      cursor: z.object({ x: Int, y: Int }),
      cursor_visible: z.boolean(),
      alternate_screen: z.boolean(),
      scrollback: Int,
      generation: Int,
    }),
  ]),
  // Fenced, the matching lines are only inside the fence, as `line N: text`.
  "surface.search": z.union([
    z.object({
      surface_id: Id,
      count: Int,
      fenced: z.literal(true),
      matches: z.array(Where).describe("Where the matches are (their text is inside the fence)"),
      text: z.string().describe("The matches as `line N: text` lines inside the fence"),
    }),
    z.object({ surface_id: Id, count: Int, fenced: z.literal(false), matches: z.array(Changed) }),
  ]),
  "surface.rename": PaneDescription,
  "surface.focus": PaneDescription,
  "surface.status": AgentStatus,
  "surface.explain": z.object({
    status: AgentStatus,
    process: Nullable(z.object({ pid: Int, argv: z.array(z.string()), family: Nullable(z.string()) })),
    last_hook: Nullable(
      z.object({
        method: z.string(),
        event: Nullable(z.string()),
        age_ms: Int,
        params: z.record(z.string(), z.unknown()).describe("The frame as the hook sent it, token left out"),
      }),
    ),
    hook_state: Nullable(z.string()),
    screen: Nullable(z.object({
      rule: z.string(),
      state: z.string(),
      message: Nullable(z.string()).optional(),
      note: z.string().optional(),
      age_ms: Int,
      rules_version: Nullable(z.union([z.string(), Int])),
    })),
    why: z.string(),
    refused_hook_frames: Int,
    refused_calls: RefusedCalls,
  }),
  "surface.close": z.object({ closed: Id }),
  "surface.send_text": z.object({
    surface_id: Id,
    bytes: Int.optional(),
    bracketed: z.boolean().optional(),
    submitted: z.boolean(),
    status: z.enum(["submitted", "queued", "stalled", "unknown"]).optional()
      .describe("With submit to an agent: how the submit transaction ended"),
    attempts: Int.optional(),
    evidence: z.string().optional(),
    elapsed_ms: Int.optional(),
    via_file: Nullable(z.string()).optional().describe("A large prompt went by reference to this file"),
  }),
  "surface.send_keystroke": z.object({ surface_id: Id, keystroke: z.string() }),
  "surface.answer": z.object({
    surface_id: Id,
    dialog_id: z.string().describe("The dialog that was answered"),
    rule: z.string().describe('The screen rule that found it, e.g. "permission_dialog", "trust_dialog"'),
    question: Nullable(z.string()).describe("What the dialog asked, as status's message gives it"),
    answer: z.string(),
    option: Nullable(z.string()).describe("The option's label, when the answer named an option"),
    keys: z.array(z.string()).describe("The keys pressed, in order"),
    presses: Int.describe("How often the keys were pressed (again only when the agent drew nothing)"),
    closed: z.boolean().describe("The dialog left the screen"),
    elapsed_ms: Int,
  }),
  "surface.split": PaneDescription,
  "surface.respawn": PaneDescription,
  "surface.ask": z.object({
    surface_id: Id,
    reply: z.string().describe("The rows between the echo and the marker (inside the fence when fenced)"),
    elapsed_ms: Int,
    fenced: z.boolean(),
  }),
  "surface.is_ready": z.object({
    surface_id: Id,
    ready: z.boolean(),
    reason: z.enum([
      "shell_prompt",
      "agent_idle",
      "agent_finished",
      "agent_waiting_for_input",
      "agent_busy",
      "dialog_open",
      "foreground_job",
      "continuation_prompt",
      "no_prompt",
      "exited",
    ]),
    detail: z.string(),
    elapsed_ms: Int,
  }),
  "surface.clear": z.object({ surface_id: Id, cleared: z.literal(true) }),
};

const fleet = {
  "fleet.list": z.object({ agents: z.array(AgentStatus.extend({ ...FleetSpend, caps: PaneCaps })) }),
};
const usage = { "usage.get": UsageResult, "usage.budget": UsageBudgetResult };

const ai = Object.fromEntries(
  (["session_start", "prompt_submit", "tool_use", "notification", "stop", "exit", "session_end"] as const)
    .map((e) => [`ai.${e}`, AgentStatus.describe("The pane's agent status after the frame")]),
) as Record<
  `ai.${"session_start" | "prompt_submit" | "tool_use" | "notification" | "stop" | "exit" | "session_end"}`,
  typeof AgentStatus
>;

const queue = {
  "queue.info": z.object({
    root: Nullable(z.string()),
    delivering: z.boolean(),
    counts: Nullable(z.object({ pending: Int, in_progress: Int, completed: Int, failed: Int })),
  }),
};

const events = {
  "events.subscribe": z.object({ type: z.literal("subscribed"), id: z.union([Int, z.string(), z.null()]) })
    .describe("The first line; every later line on the connection is an event (./events.ts)"),
};

/** Result schemas by family, then method. */
export const resultFamilies = {
  system,
  workspace,
  surface,
  fleet,
  usage,
  ai,
  queue,
  restore: restoreResults,
  notify,
  events,
  server,
  session,
  adapter,
  plugin,
} as const;

/**
 * Every result schema by method name (paneflow's methods, `events.subscribe`,
 * ptywright's). Spread, not annotated: each method keeps its own schema type,
 * so {@link Result} is the method's own shape.
 */
export const results = {
  ...system,
  ...workspace,
  ...surface,
  ...fleet,
  ...usage,
  ...ai,
  ...queue,
  ...restoreResults,
  ...notify,
  ...events,
  ...server,
  ...session,
  ...adapter,
  ...plugin,
} as const satisfies Record<Method | "events.subscribe" | PwMethod | PluginMethod, z.ZodType>;

/** A method that has a result schema (every method a client can call). */
export type ResultMethod = keyof typeof results;

/** The result of method `M`, as a type. */
export type Result<M extends ResultMethod> = z.infer<(typeof results)[M]>;
