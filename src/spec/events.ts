/**
 * What the host pushes without a request, per family: the events of an
 * `events.subscribe` stream (paneflow) and ptywright's session
 * notifications. Rendered into docs/protocol.md by `deno task docs`;
 * tests/protocol_results_test.ts checks real events against them.
 *
 * This module imports zod: the CLI path must not import it.
 *
 * @module
 */
import { z } from "zod";
import { AgentStatus } from "./results.ts";
import { BudgetEvent, UsageTotals } from "./usage.ts";
import type { EVENT_TYPES } from "./protocol.ts";
import type { PW_NOTIFICATIONS } from "./ptywright.ts";

const Int = z.number().int();
const Id = Int.min(1);

/** When the host published the event (ms since the epoch): every stream event carries it. */
const Ts = { ts: Int };

/** An `ai.*` hook event: the pane's agent status after the frame, and the state before it. */
const HookEvent = AgentStatus.extend({ previous_state: z.string().nullable(), ...Ts });

const surface = {
  surface_created: z.object({
    type: z.literal("surface_created"),
    ...Ts,
    surface_id: Id,
    workspace: Int,
    name: z.string().nullable(),
    cmd: z.string(),
  }),
  surface_changed: z.object({
    type: z.literal("surface_changed"),
    ...Ts,
    surface_id: Id,
    output_generation: Int.describe("Coalesced: a slow reader gets the newest generation once"),
  }),
  surface_renamed: z.object({
    type: z.literal("surface_renamed"),
    ...Ts,
    surface_id: Id,
    name: z.string().nullable(),
    previous_name: z.string().nullable(),
  }),
  surface_exited: z.object({
    type: z.literal("surface_exited"),
    ...Ts,
    surface_id: Id,
    workspace: Int,
    exit_code: Int,
    signal: Int.nullable(),
  }),
  surface_closed: z.object({ type: z.literal("surface_closed"), surface_id: Id, workspace: Int, ...Ts }),
};

const workspace = {
  workspace_created: z.object({
    type: z.literal("workspace_created"),
    workspace: Int,
    title: z.string(),
    ...Ts,
  }),
  workspace_closed: z.object({
    type: z.literal("workspace_closed"),
    workspace: Int,
    title: z.string(),
    ...Ts,
  }),
};

const ai = {
  "ai.session_start": HookEvent.extend({ type: z.literal("ai.session_start") }),
  "ai.prompt_submit": HookEvent.extend({ type: z.literal("ai.prompt_submit") }),
  "ai.tool_use": HookEvent.extend({ type: z.literal("ai.tool_use") }),
  "ai.notification": HookEvent.extend({ type: z.literal("ai.notification") }),
  "ai.stop": HookEvent.extend({ type: z.literal("ai.stop") }),
  "ai.session_end": HookEvent.extend({ type: z.literal("ai.session_end") }),
  "ai.exit": z.object({
    type: z.literal("ai.exit"),
    ...Ts,
    surface_id: Id,
    workspace: Int.nullable(),
    tool: z.string(),
    pid: Int.nullable(),
    state: z.enum(["errored", "idle"]),
    exit_code: Int.nullable(),
    message: z.string().nullable(),
    active_tool_name: z.null(),
  }).describe("The agent process ended (the hook's exit, or the process seen gone)"),
  usage_changed: UsageTotals.extend({
    type: z.literal("usage_changed"),
    ...Ts,
    surface_id: Id,
    agent: z.string(),
  }).describe("A pane's agent spent more (its totals; at most one every 500 ms per pane)"),
  budget_warning: z.object({ type: z.literal("budget_warning"), ...Ts, ...BudgetEvent })
    .describe("A pane's agent has spent 80 % of its budget"),
  budget_exceeded: z.object({ type: z.literal("budget_exceeded"), ...Ts, ...BudgetEvent })
    .describe("A pane's agent has spent its budget: submits to it are refused until it is raised"),
  agent_state: HookEvent.extend({
    type: z.literal("agent_state"),
    why: z.string().describe("What decided the new state"),
  }),
};

const caps = {
  capability_refused: z.object({
    type: z.literal("capability_refused"),
    ...Ts,
    surface_id: Id.optional().describe("The pane the call was aimed at, when it was one"),
    method: z.string(),
    capability: z.string(),
    target: z.record(z.string(), z.unknown()),
    caller: z.object({ kind: z.string(), pid: Int.nullable(), surface_id: Id.optional() }),
  }).describe("A call was refused for want of a capability (docs/security.md)"),
};

const NotifyOutcome = {
  ...Ts,
  surface_id: Id.optional().describe("The pane it is about; none for notify test"),
  sink: z.string(),
  sink_type: z.enum(["webhook", "slack", "ntfy", "command", "desktop"]),
  rule: Int.nullable().describe("Index of the rule in the config; null for notify test"),
  event: z.string().describe("waiting_for_input, finished, errored, stalled, exited_nonzero or test"),
  attempts: Int,
};

const notify = {
  notification_sent: z.object({ type: z.literal("notification_sent"), ...NotifyOutcome })
    .describe("A sink took a notification (docs/notify.md)"),
  notification_failed: z.object({
    type: z.literal("notification_failed"),
    ...NotifyOutcome,
    error: z.string(),
  })
    .describe("A notification was given up: retries spent, rate limit, or a full queue"),
  remote_reply: z.object({
    type: z.literal("remote_reply"),
    ...Ts,
    surface_id: Id.optional().describe("None when the link itself was refused"),
    action: z.enum(["approve", "deny", "answer", "interrupt"]).nullable(),
    origin: z.string().describe("Where the reply came from (the web view's peer, X-Forwarded-For)"),
    ok: z.boolean(),
    error: z.string().nullable(),
  }).describe("A reply link was used (docs/notify.md)"),
};

const events = {
  heartbeat: z.object({ type: z.literal("heartbeat"), ts: Int }).describe("After a quiet interval"),
  dropped: z.object({ type: z.literal("dropped"), count: Int })
    .describe("Events shed for a slow reader, where the gap is: resync"),
};

const session = {
  "session.changed": z.object({ session: z.string(), sequence: Int }),
  "session.output": z.object({
    session: z.string(),
    sequence: Int,
    output: z.string(),
    dropped: z.literal(true).optional().describe("Some output was evicted by the transcript bound"),
  }),
  "session.exited": z.object({ session: z.string(), sequence: Int }),
};

/**
 * Event schemas by family, then event type (paneflow's `type`) or
 * notification method (ptywright's, sent as JSON-RPC notifications whose
 * `params` these describe).
 */
export const eventFamilies = { surface, workspace, ai, caps, notify, events, session } as const;

/** Every stream event type and notification has a schema (a compile error otherwise). */
export const eventSchemas: Record<
  (typeof EVENT_TYPES)[number] | (typeof PW_NOTIFICATIONS)[number],
  z.ZodType
> = Object.assign({}, ...Object.values(eventFamilies));
