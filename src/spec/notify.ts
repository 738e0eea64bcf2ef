/**
 * Notifications (src/notify/, docs/notify.md): the config section `notify`
 * (rules and sinks), the `notify.*` methods' params.
 *
 * This module imports zod: the CLI path must not import it.
 *
 * @module
 */
import { z } from "zod";

/** What a rule can fire on. */
export const NOTIFY_WHEN = [
  "waiting_for_input",
  "finished",
  "errored",
  "stalled",
  "exited_nonzero",
] as const;

/** One of {@link NOTIFY_WHEN}. */
export type NotifyWhen = (typeof NOTIFY_WHEN)[number];

/** The actions a reply link can carry. */
export const REPLY_ACTIONS = ["approve", "deny", "answer", "interrupt"] as const;

/** One of {@link REPLY_ACTIONS}. */
export type ReplyAction = (typeof REPLY_ACTIONS)[number];

const SinkName = z.string().regex(
  /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
  "a sink name is letters, digits, '.', '_' and '-'",
);
const Url = z.string().regex(/^https?:\/\/\S+$/, "expected an http:// or https:// URL");

/** What every sink has: delivery bounds. */
const Delivery = {
  rate_per_min: z.number().int().min(1).max(10_000).default(20)
    .describe("Notifications a minute at most; more are dropped and reported as failed"),
  timeout_ms: z.number().int().min(100).max(120_000).default(5000)
    .describe("How long one delivery attempt may take"),
  retries: z.number().int().min(0).max(10).default(3)
    .describe("Attempts after the first, with backoff (1 s, 2 s, 4 s, ... at most 60 s)"),
};

/** A sink: where notifications go. */
export const NotifySink = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("webhook"),
    url: Url.describe("POSTed the generic JSON body"),
    headers: z.record(z.string(), z.string()).default({}).describe("Extra request headers"),
    ...Delivery,
  }),
  z.strictObject({
    type: z.literal("slack"),
    url: Url.describe("A Slack incoming webhook URL"),
    ...Delivery,
  }),
  z.strictObject({
    type: z.literal("ntfy"),
    url: Url.describe("The topic's URL, e.g. https://ntfy.sh/my-agents"),
    token: z.string().min(1).optional().describe("Bearer token for a protected topic"),
    ...Delivery,
  }),
  z.strictObject({
    type: z.literal("command"),
    command: z.string().min(1).describe("Run with sh -c; the generic JSON body on its stdin"),
    ...Delivery,
  }),
  z.strictObject({ type: z.literal("desktop"), ...Delivery }).describe("notify-send, where present"),
]);

/** A sink, every default filled in. */
export type NotifySink = z.infer<typeof NotifySink>;

/** A rule: when, where, to whom. */
export const NotifyRule = z.strictObject({
  when: z.array(z.enum(NOTIFY_WHEN)).min(1).describe("The states and transitions that fire the rule"),
  where: z.strictObject({
    pane: z.string().min(1).optional().describe("Pane name glob (* and ?)"),
    workspace: z.string().min(1).optional().describe("Workspace title glob"),
    tool: z.string().min(1).optional().describe("Agent: claude, codex, gemini, opencode, ..."),
  }).default({}).describe("Which panes; empty: all"),
  to: z.array(SinkName).min(1).describe("Sink names"),
  min_turn_secs: z.number().min(0).default(60).describe("`finished` fires only after a turn this long"),
  debounce_secs: z.number().min(0).default(10)
    .describe("At most one notification per pane and condition in this window"),
});

/** A rule, every default filled in. */
export type NotifyRule = z.infer<typeof NotifyRule>;

/** The config section `notify`. */
export const NotifyConfig = z.strictObject({
  rules: z.array(NotifyRule).default([]),
  sinks: z.record(SinkName, NotifySink).default({}),
  public_url: Url.optional().describe("Base URL of `paneflow web` for reply links; web --public-url wins"),
  link_ttl_secs: z.number().int().min(10).max(7 * 86_400).default(3600).describe(
    "How long a reply link works",
  ),
}).prefault({}).superRefine((c, ctx) => {
  c.rules.forEach((r, i) => {
    r.to.forEach((name, j) => {
      if (!(name in c.sinks)) {
        ctx.addIssue({ code: "custom", path: ["rules", i, "to", j], message: `no sink named "${name}"` });
      }
    });
  });
});

/** The config section `notify`, every default filled in. */
export type NotifyConfig = z.infer<typeof NotifyConfig>;

const Token = z.string().min(1).max(1024).regex(/^[A-Za-z0-9_.-]+$/, "not a reply link token");

/** The `notify.*` methods. */
export const notifyMethods = {
  "notify.ls": z.strictObject({}),
  "notify.test": z.strictObject({ sink: SinkName.describe("A sink name from the config") }),
  "notify.web": z.strictObject({
    public_url: Url.describe("Where `paneflow web` is reachable from elsewhere"),
    explicit: z.boolean().default(true)
      .describe("Given by --public-url; else the server's own URL, used only when the config names none"),
  }),
  "notify.reply": z.strictObject({
    token: Token.describe("The link's token"),
    text: z.string().max(4096).refine((t) => !/[\r\n]/.test(t), "an answer is one line").optional()
      .describe("The one-line answer (action answer)"),
    origin: z.string().max(256).describe("Where the reply came from (the web view's peer address)"),
  }),
} as const;

const Int = z.number().int();
const nullable = <T extends z.ZodType>(t: T) => t.nullable();
const Id = Int.min(1).describe("Pane id (surface_id)");

const SinkRow = z.object({
  name: z.string(),
  type: z.string(),
  sent: Int,
  failed: Int,
  dropped: Int.describe("Over the rate limit, or pushed out of a full queue"),
  queued: Int,
  last_sent: nullable(Int).describe("ms since the epoch"),
  last_error: nullable(z.string()),
  last_error_at: nullable(Int),
  down: z.boolean().describe("The last attempt failed (logged once until it is back)"),
});

/** The `notify.*` methods' results. */
export const notifyResults = {
  "notify.ls": z.object({
    rules: z.array(NotifyRule),
    sinks: z.array(SinkRow),
    public_url: nullable(z.string()),
    link_ttl_secs: Int,
  }),
  "notify.test": z.object({ sink: z.string(), ok: z.boolean(), error: nullable(z.string()), attempts: Int }),
  "notify.web": z.object({ public_url: nullable(z.string()) }),
  "notify.reply": z.object({
    surface_id: Id,
    action: z.enum(["approve", "deny", "answer", "interrupt"]),
    ok: z.literal(true),
    detail: z.string(),
  }),
};
