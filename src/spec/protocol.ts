/**
 * The protocol: every JSON-RPC method with its params schema. The host
 * validates each request with these; `paneflow api schema` prints them as JSON
 * Schema. Method names are Paneflow's and never renamed
 * (https://github.com/ArthurDEV44/paneflow/blob/main/docs/user/scripting.md).
 * What the methods answer is in ./results.ts, what the host pushes in
 * ./events.ts, each family's error table in ./errors.ts.
 *
 * This module imports zod: the CLI path must not import it.
 *
 * @module
 */
import { z } from "zod";
import { UsageBudgetParams, UsageGetParams } from "./usage.ts";
import { WorkspaceSpec } from "./workspace.ts";
import { paneioGated, paneioMethods } from "./paneio.ts";
import { CapsGrant } from "./caps.ts";
import { restoreMethods } from "./restore.ts";
import { notifyMethods } from "./notify.ts";
import { ENGINE_KINDS } from "./engines.ts";

const SurfaceId = z.number().int().min(1).describe("Pane id (surface_id)");
const WorkspaceIndex = z.union([
  z.number().int().min(0),
  z.string().regex(/^w[1-9]\d*$/, 'a workspace id looks like "w3"'),
]).describe("Zero-based workspace index, or the workspace's stable id (w<N>)");
const Env = z.record(
  z.string(),
  z.string().refine((v) => !v.includes("\0"), "an environment value cannot hold NUL"),
).superRefine((env, ctx) => {
  for (const key of Object.keys(env)) {
    if (!/^[^=\0]+$/.test(key)) {
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: "an environment variable name cannot be empty or hold = or NUL",
      });
    }
  }
});
/** A count the handler clamps (lines, max_matches): any integer, however large. */
const Count = z.number().refine(Number.isInteger, "expected an integer");
/** Names and titles: shown in every listing, so bounded. */
const Name = z.string().max(256);

/** Layout presets (docs/up.md). */
export const LayoutName = z.enum(["even_h", "even_v", "main_vertical", "tiled"]);

/** A split tree: a leaf names a surface, a node splits h (side by side) or v. */
export type LayoutTree =
  | { surface_id: number }
  | { direction: "h" | "v"; children: LayoutTree[]; sizes?: number[] };

/** Schema of {@link LayoutTree}. */
export const LayoutTree: z.ZodType<LayoutTree> = z.lazy(() =>
  z.union([
    z.strictObject({ surface_id: SurfaceId }),
    z.strictObject({
      direction: z.enum(["h", "v"]),
      children: z.array(LayoutTree).min(1),
      // Relative weights, one per child.
      sizes: z.array(z.number().positive().max(1_000_000)).optional(),
    }).refine((node) => !node.sizes || node.sizes.length === node.children.length, {
      message: "sizes needs one weight per child",
      path: ["sizes"],
    }),
  ])
);

const Empty = z.strictObject({});

const HookText = z.string().max(64 * 1024);

/** Params of the `ai.*` lifecycle frames that `paneflow ai-hook` posts. */
export const AiFrame = z.strictObject({
  surface_id: SurfaceId,
  tool: z.string().max(64).optional(),
  event: z.string().max(64).optional(),
  pid: z.number().int().positive().optional(),
  session_id: z.string().max(256).optional(),
  prompt: HookText.optional(),
  tool_name: z.string().max(256).optional(),
  phase: z.enum(["pre", "post"]).optional(),
  message: HookText.optional(),
  notification_type: z.string().max(64).optional(),
  last_result: HookText.optional(),
  error_type: z.string().max(256).optional(),
  exit_code: z.number().int().optional(),
  token: z.string().max(128).optional().describe("The pane's PANEFLOW_PANE_TOKEN"),
  transcript_path: z.string().max(4096).optional()
    .describe("The agent's own log (Claude Code's transcript, Codex's rollout): what the usage ledger reads"),
});

/** Fields a new pane can be given (split, workspace.create, workspace.up). */
export const PaneFields = {
  cwd: z.string().optional(),
  command: z.string().optional(),
  prompt: z.string().optional(),
  env: Env.optional(),
  name: Name.min(1).optional(),
  caps: CapsGrant.optional(),
  restart: z.boolean().optional()
    .describe("After a restore, run the command again instead of a shell with a note (docs/restore.md)"),
  engine: z.enum(ENGINE_KINDS).optional().describe(
    "What parses the pane's output (default: terminal.engine)",
  ),
};

/** Params schema of every method, by method name. */
export const methods = {
  "system.ping": Empty,
  "system.capabilities": Empty,
  "system.identify": Empty,
  "system.shutdown": Empty,
  "system.hello": z.strictObject({
    name: z.string().max(100).optional(),
    pid: z.number().int().positive().optional(),
    verb: z.string().max(100).optional(),
  }).describe("Says who this client is (shown by system.clients)"),
  "system.clients": Empty,
  "system.stats": Empty,
  "workspace.list": Empty,
  "workspace.current": Empty,
  "workspace.create": z.strictObject({
    name: Name.optional().describe("Workspace title"),
    layout: LayoutName.optional(),
    cwd: PaneFields.cwd,
    command: PaneFields.command,
    prompt: PaneFields.prompt,
    env: PaneFields.env,
    pane_name: PaneFields.name.describe("Name of the first pane"),
    caps: PaneFields.caps.describe("The first pane's capabilities"),
    restart: PaneFields.restart,
    engine: PaneFields.engine,
  }),
  "workspace.select": z.strictObject({ index: WorkspaceIndex }),
  "workspace.rename": z.strictObject({
    index: WorkspaceIndex.optional().describe("Default: the active workspace"),
    name: z.string().min(1).max(200).describe("The new title"),
  }).describe("Retitle a workspace (tmux rename-window / rename-session)"),
  "workspace.close": z.strictObject({ index: WorkspaceIndex.optional() }),
  "workspace.up": WorkspaceSpec.describe("Bring up a workspace spec (paneflow up); cwds absolute"),
  "workspace.restore_layout": z.strictObject({
    layout: z.union([LayoutName, LayoutTree]),
    index: WorkspaceIndex.optional(),
  }),
  "surface.list": z.strictObject({ workspace: WorkspaceIndex.optional() }),
  "surface.read": z.strictObject({
    surface_id: SurfaceId,
    lines: Count.optional(),
    offset: z.number().int().min(0).optional(),
    fenced: z.boolean().optional(),
    since: z.number().int().min(0).optional()
      .describe("Return only lines added or changed since this output_generation"),
    join_wrapped: z.boolean().optional()
      .describe("Count and return logical lines: soft-wrapped rows joined (ignored with since)"),
  }),
  "surface.screen": z.strictObject({
    surface_id: SurfaceId,
    scrollback: Count.optional().describe("Rows of scrollback above the screen (0..5000, default 0)"),
    since: z.number().int().min(0).optional()
      .describe("The output_generation the caller shows: answered unchanged: true while it is current"),
  }).describe("The screen with colours and cursor as ANSI that replays it (paneflow web)"),
  "surface.search": z.strictObject({
    surface_id: SurfaceId,
    pattern: z.string().min(1),
    max_matches: Count.optional(),
    fenced: z.boolean().optional()
      .describe("Fence the matches as untrusted output (default: ai_injection_fence)"),
  }),
  "surface.rename": z.strictObject({ surface_id: SurfaceId, name: Name.nullable() }),
  "surface.focus": z.strictObject({ surface_id: SurfaceId }),
  "surface.status": z.strictObject({ surface_id: SurfaceId }),
  "surface.close": z.strictObject({ surface_id: SurfaceId }),
  "surface.send_text": z.strictObject({
    surface_id: SurfaceId,
    text: z.string(),
    submit: z.boolean().optional(),
    paste: z.boolean().optional(),
  }),
  "surface.send_keystroke": z.strictObject({ surface_id: SurfaceId, keystroke: z.string().min(1) }),
  "surface.answer": z.strictObject({
    surface_id: SurfaceId,
    answer: z.string().min(1).max(256)
      .describe('"approve", "deny", or an option of the dialog: its number or (part of) its label'),
    dialog_id: z.string().regex(/^[0-9a-f]{8}$/, "a dialog id is 8 hex digits").optional()
      .describe("The dialog_id surface.status gave: another dialog on screen is refused"),
  }).describe(
    "Answer the dialog an agent shows (permission, hooks trust) with the keys its screen rules name",
  ),
  "surface.split": z.strictObject({
    direction: z.enum(["h", "v"]),
    surface_id: SurfaceId.optional(),
    managed_worktree: z.string().optional()
      .describe("Run the new pane in the managed worktree <repo>.worktrees/<branch> of cwd's repository"),
    ...PaneFields,
  }),
  "surface.respawn": z.strictObject({
    surface_id: SurfaceId,
    command: PaneFields.command.describe("Shell command to run (default: the shell)"),
    cwd: PaneFields.cwd,
    env: PaneFields.env.describe("Added to the pane's environment"),
  }).describe("Run a new program in a pane (tmux respawn-pane -k): the old one gets SIGHUP; the id stays"),
  "surface.explain": z.strictObject({ surface_id: SurfaceId }),
  "fleet.list": Empty,
  "usage.budget": UsageBudgetParams.describe("Set or raise a pane's (or its workspace's) budget"),
  "usage.get": UsageGetParams.describe("What the panes' agents spent: tokens by kind, cost, turns"),
  "ai.session_start": AiFrame,
  "ai.prompt_submit": AiFrame,
  "ai.tool_use": AiFrame,
  "ai.notification": AiFrame,
  "ai.stop": AiFrame,
  "ai.exit": AiFrame,
  "ai.session_end": AiFrame,
  ...paneioMethods,
  ...restoreMethods,
  ...notifyMethods,
} as const;

/** A method name. */
export type Method = keyof typeof methods;

/** Params of a method, after validation. */
export type Params<M extends Method> = z.infer<(typeof methods)[M]>;

/** Methods that write into panes, and the gate each needs. */
export const gatedMethods: Partial<Record<Method, "send" | "keystroke">> = {
  "surface.send_text": "send",
  "surface.send_keystroke": "keystroke",
  "surface.answer": "keystroke",
  // Ends every pane: gated as strictly as keystrokes (docs/security.md).
  "system.shutdown": "keystroke",
  ...paneioGated,
};

/** Renders a zod error as one line naming the field: `"lines": expected number`. */
export function describeZodError(err: z.ZodError): string {
  const issues = err.issues.map((issue) => {
    const path = issue.path.length ? issue.path.join(".") : "params";
    if (issue.code === "unrecognized_keys") {
      const keys = firstFew(issue.keys.map((k) => `"${k}"`), ", ");
      return `${path === "params" ? "" : `"${path}": `}unknown field ${keys}`;
    }
    return `"${path}": ${issue.message}`;
  });
  return firstFew(issues, "; ");
}

/** At most five items joined by `sep`, then how many more there were: a message stays short. */
function firstFew(items: string[], sep: string): string {
  return items.length > 5
    ? `${items.slice(0, 5).join(sep)}${sep}and ${items.length - 5} more`
    : items.join(sep);
}

/** The JSON Schema of every method's params (for `paneflow api schema`). */
export function jsonSchema(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries({ ...methods, "events.subscribe": SubscribeParams })) {
    out[name] = z.toJSONSchema(schema, { unrepresentable: "any" });
  }
  return out;
}

/** Event types a subscriber can filter on (Paneflow's, plus pane and workspace lifecycle; docs/protocol.md). */
export const EVENT_TYPES = [
  "ai.session_start",
  "ai.prompt_submit",
  "ai.tool_use",
  "ai.notification",
  "ai.stop",
  "ai.exit",
  "ai.session_end",
  "agent_state",
  "usage_changed",
  "budget_warning",
  "budget_exceeded",
  "surface_changed",
  "surface_created",
  "surface_renamed",
  "surface_exited",
  "surface_closed",
  "workspace_created",
  "workspace_closed",
  "capability_refused",
  "notification_sent",
  "notification_failed",
  "remote_reply",
  // Always delivered; accepted so that a list naming them is valid.
  "heartbeat",
  "dropped",
] as const;

/**
 * Params of `events.subscribe`, which the connection code answers itself (it
 * turns the connection into a stream); an empty list filters nothing.
 */
export const SubscribeParams = z.strictObject({
  surfaces: z.array(SurfaceId).optional().describe("Only events of these panes"),
  types: z.array(z.enum(EVENT_TYPES)).optional().describe("Only events of these types"),
});
