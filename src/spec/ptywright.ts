/**
 * ptywright's automation protocol (docs/ptywright.md; upstream
 * https://github.com/utensils/ptywright/blob/main/website/reference/json-rpc.md): its own
 * error table, the params of `server.*` and `session.*`, action and key
 * names, and the limits paneflow puts on them. The family keeps its error
 * codes apart from paneflow's (src/spec/codes.ts): -32001 is a matcher
 * timeout here and a permission error there.
 *
 * @module
 */
import { z } from "zod";
import { FUNCTION_KEYS } from "./keys.ts";

/** ptywright's JSON-RPC error codes. */
export const PwError = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  Internal: -32603,
  Timeout: -32001,
  Closed: -32002,
  PermissionDenied: -32004,
  Cancelled: -32005,
} as const;

/** The fixed messages of ptywright's own errors. */
export const PwMessage = {
  Timeout: "timed out waiting for matcher",
  Closed: "session is closed",
  Cancelled: "wait cancelled",
} as const;

/** What `server.capabilities` reports as the protocol's name. */
export const PROTOCOL_NAME = "ptywright";

/** The methods of the family that exist today, in ptywright's order. */
export const PW_METHODS = [
  "server.capabilities",
  "server.set_notifications",
  "session.create",
  "session.list",
  "session.close",
  "session.kill",
  "session.resize",
  "session.input",
  "session.snapshot",
  "session.transcript",
  "session.wait",
] as const;

/** Server-originated notifications. */
export const PW_NOTIFICATIONS = ["session.changed", "session.output", "session.exited"] as const;

/** The namespaces the family answers (an unknown method in them gets ptywright's text). */
export function isPtywrightMethod(method: string): boolean {
  return method.startsWith("server.") || method.startsWith("session.") || method.startsWith("adapter.") ||
    method.startsWith("plugin.");
}

/** Defaults and limits. */
export const PwLimits = {
  rows: 24,
  cols: 80,
  /** 128 KiB of characters. */
  transcriptMaxChars: 128 * 1024,
  /** A transcript bound above this is refused: the host keeps it in memory. */
  transcriptMaxCharsLimit: 64 * 1024 * 1024,
  waitTimeoutMs: 30_000,
  /** Longest wait a caller may ask for (24 h). */
  waitTimeoutMaxMs: 24 * 3600 * 1000,
  /** `transcript_tail` of a wait result, in characters. */
  tailChars: 16_384,
  /** One input action's payload, in bytes of UTF-8. */
  inputMaxBytes: 512 * 1024,
  /** Deepest matcher tree, and most nodes in one. */
  matcherDepth: 64,
  matcherNodes: 1024,
  /** Longest regex source (matchers and redaction). */
  regexMaxChars: 4096,
  /** Most extra redaction rules per call. */
  redactionRules: 64,
  /** Largest terminal. */
  maxRows: 1000,
  maxCols: 1000,
} as const;

/** ptywright's key names and the bytes they send (src/action.rs). */
export const PW_KEYS: Record<string, string> = (() => {
  const keys: Record<string, string> = {
    enter: "\r",
    escape: "\x1b",
    tab: "\t",
    shift_tab: "\x1b[Z",
    backspace: "\x7f",
    delete: "\x1b[3~",
    space: " ",
    up: "\x1b[A",
    down: "\x1b[B",
    right: "\x1b[C",
    left: "\x1b[D",
    home: "\x1b[H",
    end: "\x1b[F",
    page_up: "\x1b[5~",
    page_down: "\x1b[6~",
    insert: "\x1b[2~",
    ...FUNCTION_KEYS,
  };
  for (let c = 0; c < 26; c++) {
    const letter = String.fromCharCode(97 + c);
    if ("hijm".includes(letter)) continue;
    keys[`ctrl_${letter}`] = String.fromCharCode(c + 1);
  }
  return keys;
})();

/** Signals the `signal` action takes. */
export const PW_SIGNALS: Record<string, string> = {
  term: "SIGTERM",
  hup: "SIGHUP",
  quit: "SIGQUIT",
  int: "SIGINT",
  kill: "SIGKILL",
  user1: "SIGUSR1",
  user2: "SIGUSR2",
};

const u16 = z.number().int().min(0).max(65535);
const size = (max: number) => z.number().int().min(1).max(max);
const SessionId = z.string().max(64);

/** A per-call redaction policy: `enabled` and `replacement` are required, as serde has no defaults. */
export const Redaction = z.object({
  enabled: z.boolean(),
  replacement: z.string().max(256),
  extra_literals: z.array(z.string().max(4096)).max(PwLimits.redactionRules).optional(),
  extra_regexes: z.array(z.string()).max(PwLimits.redactionRules).optional(),
});
export type Redaction = z.infer<typeof Redaction>;

const ReadParams = z.object({
  session: SessionId,
  redact: z.boolean().optional(),
  redaction: Redaction.optional(),
});

const TerminalSize = z.object({
  rows: size(PwLimits.maxRows),
  cols: size(PwLimits.maxCols),
  pixel_width: u16,
  pixel_height: u16,
});

/** One `session.input` action; the payload's size is checked by the handler. */
export const Action = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), value: z.string() }),
  z.object({ type: z.literal("paste"), value: z.string() }),
  z.object({ type: z.literal("bracketed_paste"), value: z.string() }),
  z.object({ type: z.literal("key"), value: z.string() }),
  z.object({ type: z.literal("resize"), value: TerminalSize }),
  z.object({ type: z.literal("interrupt") }),
  z.object({ type: z.literal("eof") }),
  z.object({ type: z.literal("kill") }),
  z.object({ type: z.literal("signal"), value: z.string() }),
  z.object({
    type: z.literal("stream_text"),
    value: z.object({
      text: z.string(),
      chunk_chars: z.number().int().optional(),
      delay_ms: z.number().int().min(0).optional(),
    }),
  }),
]);
export type Action = z.infer<typeof Action>;

/** Params of every method of the family (matchers are checked by src/session/matcher.ts). */
export const pwParams = {
  "server.capabilities": z.object({}),
  "server.set_notifications": z.object({
    enabled: z.boolean(),
    adapters: z.array(z.string().max(64)).max(1024).optional(),
    sessions: z.array(SessionId).max(1024).optional(),
  }),
  "session.create": z.object({
    program: z.string().min(1).max(4096),
    args: z.array(z.string()).max(4096).optional(),
    cwd: z.string().max(4096).optional(),
    env: z.record(z.string(), z.string()).optional(),
    rows: size(PwLimits.maxRows).optional(),
    cols: size(PwLimits.maxCols).optional(),
    pixel_width: u16.optional(),
    pixel_height: u16.optional(),
    transcript_max_chars: z.number().int().min(1).max(PwLimits.transcriptMaxCharsLimit).optional(),
    raw_transcript_path: z.string().min(1).max(4096).optional(),
    raw_transcript_append: z.boolean().optional(),
  }),
  "session.list": z.object({}),
  "session.close": z.object({ session: SessionId }),
  "session.kill": z.object({ session: SessionId }),
  "session.resize": z.object({
    session: SessionId,
    rows: size(PwLimits.maxRows),
    cols: size(PwLimits.maxCols),
    pixel_width: u16.optional(),
    pixel_height: u16.optional(),
  }),
  "session.input": z.object({ session: SessionId, action: Action }),
  "session.snapshot": ReadParams,
  "session.transcript": ReadParams,
  "session.wait": z.object({
    session: SessionId,
    matcher: z.unknown(),
    timeout_ms: z.number().int().min(0).max(PwLimits.waitTimeoutMaxMs).optional(),
  }),
} as const;

export type PwMethod = keyof typeof pwParams;
export type PwParams<M extends PwMethod> = z.infer<(typeof pwParams)[M]>;

const AdapterId = z.string().max(64);
const PluginName = z.string().max(256);
const AdapterStart = z.object({
  plugin: PluginName,
  program: z.string().min(1).max(4096).optional(),
  args: z.array(z.string().max(65536)).max(4096).optional(),
  cwd: z.string().max(4096).optional(),
  env: z.record(z.string(), z.string()).optional(),
  rows: size(Math.max(PwLimits.maxRows, PwLimits.maxCols)).optional(),
  cols: size(Math.max(PwLimits.maxRows, PwLimits.maxCols)).optional(),
  pixel_width: u16.optional(),
  pixel_height: u16.optional(),
});
const AdapterRead = z.object({
  adapter: AdapterId,
  redact: z.boolean().optional(),
  redaction: Redaction.optional(),
});
const WaitBlock = z.object({
  intent: z.string().max(256).optional(),
  params: z.record(z.string(), z.unknown()).optional(),
  timeout_ms: z.number().int().min(0).max(PwLimits.waitTimeoutMaxMs).optional(),
  wait_id: z.string().max(256).optional(),
});

/** Params of the `adapter.*` and `plugin.*` methods (src/server/methods/plugins.ts). */
export const pluginParams = {
  "adapter.list": z.object({}),
  "adapter.live": z.object({}),
  "adapter.start": AdapterStart,
  "adapter.resume": AdapterStart.extend({ prior_adapter: AdapterId.optional() }),
  "adapter.state": z.object({ adapter: AdapterId }),
  "adapter.send": z.object({
    adapter: AdapterId,
    intent: z.string().max(256),
    params: z.unknown().optional(),
  }),
  "adapter.wait": WaitBlock.extend({ adapter: AdapterId }),
  "adapter.cancel_wait": z.object({ wait_id: z.string().max(256) }),
  "adapter.turn": z.object({
    adapter: AdapterId,
    send: z.object({ intent: z.string().max(256), params: z.unknown().optional() }),
    wait: WaitBlock.optional(),
  }),
  "adapter.snapshot": AdapterRead,
  "adapter.transcript": AdapterRead,
  "adapter.inspect": AdapterRead,
  "adapter.close": z.object({ adapter: AdapterId }),
  "plugin.capabilities": z.object({}),
  "plugin.validate_manifest": z.object({ manifest: z.unknown() }),
  "plugin.describe": z.object({ plugin: PluginName }),
  "plugin.load": z.object({ manifest_path: z.string().min(1).max(4096) }),
  "plugin.unload": z.object({ plugin: PluginName }),
} as const;

/** A method of the `adapter.*` / `plugin.*` families. */
export type PluginMethod = keyof typeof pluginParams;
export type PluginParams<M extends PluginMethod> = z.infer<(typeof pluginParams)[M]>;

/**
 * A zod failure in the words serde would use (``missing field `session` ``,
 * ``invalid type for `rows`: …``), with the path of the field.
 */
export function describePwZodError(err: z.ZodError): string {
  const issue = err.issues[0];
  if (!issue) return "invalid params";
  const path = issue.path.map(String).join(".");
  const where = path ? `\`${path}\`` : "params";
  if (issue.code === "invalid_type" && issue.input === undefined) {
    return `missing field ${where}`;
  }
  if (issue.code === "invalid_union" || (issue.code as string) === "invalid_union_discriminator") {
    return `${where}: unknown variant; expected one of text, paste, bracketed_paste, key, resize, interrupt, eof, kill, signal, stream_text`;
  }
  return `invalid value for ${where}: ${issue.message}`;
}
