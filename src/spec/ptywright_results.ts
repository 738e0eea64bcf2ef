/**
 * Result schemas of ptywright's families (`server.*`, `session.*`,
 * `adapter.*`, `plugin.*`): ./results.ts joins them with paneflow's.
 *
 * @module
 */
import { z } from "zod";

const Int = z.number().int();
const Nullable = <T extends z.ZodType>(t: T) => t.nullable();

/** A ptywright ScreenSnapshot (session.snapshot, session.wait). */
export const ScreenSnapshot = z.object({
  size: z.object({ rows: Int, cols: Int, pixel_width: Int, pixel_height: Int }),
  cursor: z.object({ row: Int, col: Int, visible: z.boolean() }),
  sequence: Int,
  plain_text: z.string(),
  cells: z.array(z.object({
    row: Int,
    col: Int,
    text: z.string(),
    wide: z.boolean(),
    wide_continuation: z.boolean(),
    style: z.object({
      foreground: z.string(),
      background: z.string(),
      bold: z.boolean(),
      dim: z.boolean(),
      italic: z.boolean(),
      underline: z.boolean(),
      inverse: z.boolean(),
    }),
  })),
  alternate_screen: z.boolean(),
  application_cursor: z.boolean(),
  application_keypad: z.boolean(),
  title: Nullable(z.string()),
});

export const server = {
  "server.capabilities": z.object({
    name: z.literal("ptywright"),
    version: z.string(),
    server: z.literal("paneflow"),
    framing: z.array(z.enum(["ndjson", "lsp"])),
    methods: z.array(z.string()),
    notifications: z.array(z.string()),
  }),
  "server.set_notifications": z.object({ enabled: z.boolean() }).describe("The connection's setting now"),
};

export const session = {
  "session.create": z.object({ session: z.string() }),
  "session.list": z.object({ sessions: z.array(z.string()) }),
  "session.close": z.object({ closed: z.literal(true) }),
  "session.kill": z.object({ killed: z.literal(true) }),
  "session.resize": z.object({ resized: z.literal(true) }),
  "session.input": z.object({ sent: z.literal(true) }),
  "session.snapshot": ScreenSnapshot,
  "session.transcript": z.object({ text: z.string() }),
  "session.wait": z.object({
    matched: z.literal(true),
    sequence: Int,
    elapsed_ms: Int,
    snapshot: ScreenSnapshot,
    transcript_tail: z.string(),
  }),
};

/** A plugin manifest in its wire form (src/plugins/manifest.ts validates it). */
export const PluginManifest = z.object({
  name: z.string(),
  kind: z.enum(["adapter", "macro", "matcher"]),
  version: z.string(),
  runtime: Nullable(z.enum(["lua", "wasm"])),
  entrypoint: Nullable(z.string()),
  permissions: z.array(z.string()),
  default_target: z.object({
    program: z.string(),
    args: z.array(z.string()).optional(),
    rows: Int.optional(),
    cols: Int.optional(),
    env: z.record(z.string(), z.string()).optional(),
    required_env: z.record(z.string(), z.string()).optional(),
  }).optional(),
});

/** An adapter's classified state (ptywright's ExtensionStateSnapshot). */
export const AdapterState = z.object({
  state: z.string(),
  confidence: z.number(),
  evidence: z.string(),
  sequence: Int,
  candidates: z.array(z.unknown()),
  metadata: z.record(z.string(), z.unknown()).optional(),
  host_marks: z.array(z.object({ label: z.string() })).optional(),
  events: z.array(z.record(z.string(), z.unknown())).optional(),
});

/** What a matcher that fired reports (src/plugins/matcher.ts). */
export type MatchOutcome =
  | { kind: "contains_text" | "transcript_contains"; text: string }
  | { kind: "screen_regex" | "transcript_regex"; pattern: string; capture: string }
  | { kind: "cursor_at"; row: number; col: number }
  | { kind: "screen_stable"; min_ms: number }
  | { kind: "process_exited" }
  | { kind: "any"; matched: MatchOutcome }
  | { kind: "all"; matched: MatchOutcome[] }
  | { kind: "lua"; plugin: string; predicate: string; evidence?: unknown; capture?: unknown };

/** Schema of {@link MatchOutcome}. */
export const MatchOutcome: z.ZodType<MatchOutcome> = z.lazy(() =>
  z.union([
    z.object({ kind: z.enum(["contains_text", "transcript_contains"]), text: z.string() }),
    z.object({
      kind: z.enum(["screen_regex", "transcript_regex"]),
      pattern: z.string(),
      capture: z.string(),
    }),
    z.object({ kind: z.literal("cursor_at"), row: Int, col: Int }),
    z.object({ kind: z.literal("screen_stable"), min_ms: z.number() }),
    z.object({ kind: z.literal("process_exited") }),
    z.object({ kind: z.literal("any"), matched: MatchOutcome }),
    z.object({ kind: z.literal("all"), matched: z.array(MatchOutcome) }),
    z.object({
      kind: z.literal("lua"),
      plugin: z.string(),
      predicate: z.string(),
      evidence: z.unknown().optional(),
      capture: z.unknown().optional(),
    }),
  ])
);

const AdapterStarted = z.object({
  adapter: z.string(),
  plugin: z.string(),
  session: z.string(),
  state: AdapterState,
});
const AdapterWaited = z.object({
  state: AdapterState,
  matched: Nullable(MatchOutcome),
  wait_id: z.string().optional().describe("The caller's wait_id, when it gave one"),
});

export const adapter = {
  "adapter.list": z.object({ plugins: z.array(PluginManifest) }),
  "adapter.live": z.object({
    adapters: z.array(z.object({
      adapter: z.string(),
      plugin: z.string(),
      session: z.string(),
      sequence: Int,
      finished: z.boolean(),
    })),
  }),
  "adapter.start": AdapterStarted,
  "adapter.resume": AdapterStarted,
  "adapter.state": z.object({ state: AdapterState }),
  "adapter.send": z.object({ state: AdapterState }),
  "adapter.wait": AdapterWaited,
  "adapter.cancel_wait": z.object({
    cancelled: z.boolean().describe("false: no wait had that id"),
    adapter: z.string().optional(),
    wait_id: z.string().optional(),
  }),
  "adapter.turn": AdapterWaited,
  "adapter.snapshot": ScreenSnapshot,
  "adapter.transcript": z.object({ text: z.string() }),
  "adapter.inspect": z.object({
    adapter: z.string(),
    plugin: z.string(),
    session: z.string(),
    state: Nullable(AdapterState).describe("The last classified state"),
    plain_text: z.string(),
    body_text: z.string(),
    status_text: z.string(),
    transcript_tail: z.string(),
    sequence: Int,
  }),
  "adapter.close": z.object({ closed: z.literal(true) }),
};

export const plugin = {
  "plugin.capabilities": z.object({
    permissions: z.array(z.string()),
    embedded_lua: z.boolean(),
    wasm: z.boolean(),
    builtin_plugins: z.array(PluginManifest),
  }),
  "plugin.validate_manifest": z.object({ valid: z.literal(true) }),
  "plugin.describe": z.object({
    plugin: z.string(),
    manifest: PluginManifest,
    intents: z.array(z.unknown()),
    wait_matchers: z.array(z.unknown()),
    states: z.array(z.unknown()),
  }),
  "plugin.load": z.object({ plugin: z.string() }),
  "plugin.unload": z.object({ unloaded: z.literal(true) }),
};
