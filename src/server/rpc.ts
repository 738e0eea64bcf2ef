/**
 * JSON-RPC dispatch: validates a request against the protocol module, checks
 * the write gate, runs the handler and maps every error in one place.
 *
 * @module
 */
import { z } from "zod";
import { ErrorCode, ErrorReason, MAX_SEND_BYTES, PROTOCOL_VERSION, VERSION } from "../spec/codes.ts";
import type { Config } from "../spec/config.ts";
import { describeZodError, gatedMethods, type Method, methods, type Params } from "../spec/protocol.ts";
import { RpcError } from "../errors.ts";
import { defang, fence } from "./fence.ts";
import { keyBytes } from "./keys.ts";
import type { AgentTracker, HookFrame } from "./agents.ts";
import type { PanePool } from "./pane_pool.ts";
import { LARGE_PROMPT_BYTES, stripPasteEnd, submitDelayMs, submitToAgent } from "./submit.ts";
import type { Registry, Surface } from "./registry.ts";
import { splitWithWorktree, workspaceUp } from "./up.ts";
import type { PaneIO } from "../paneio/service.ts";
import { paneioHandlers } from "../paneio/methods.ts";

/** A JSON-RPC response object. */
export type Response =
  | { jsonrpc: "2.0"; id: unknown; result: unknown }
  | { jsonrpc: "2.0"; id: unknown; error: { code: number; message: string; data?: unknown } };

/** What handlers can reach. */
export interface HostContext {
  config: Config;
  registry: Registry;
  pool: PanePool;
  agents: AgentTracker;
  /** The host's own environment enables `key` and `send`. */
  scripting: boolean;
  startedAt: number;
  socketPath: string;
  shutdown: () => void;
  /** The host's log (stderr or the --log file). */
  log?: (line: string) => void;
  /** PaneIO: ask, readiness, clear, and the message queue (src/paneio/). */
  paneio?: PaneIO;
}

type Handler<M extends Method> = (ctx: HostContext, params: Params<M>) => Promise<unknown> | unknown;
type Handlers = { [M in Method]: Handler<M> };

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function gateOpen(ctx: HostContext, gate: "send" | "keystroke"): boolean {
  return gate === "send" ? ctx.scripting || ctx.config.ai_unrestricted : ctx.scripting;
}

function gateMessage(method: string, gate: "send" | "keystroke"): string {
  return gate === "send"
    ? `${method} is gated: start the host with PANEFLOW_IPC_SCRIPTING=1 in its environment or set "ai_unrestricted": true in the config`
    : `${method} is gated: start the host with PANEFLOW_IPC_SCRIPTING=1 in its environment`;
}

function live(s: Surface): Surface {
  if (s.exit) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Pane ${s.id} has exited (exit code ${s.exit.exit_code}); it can be read but not written`,
      { reason: ErrorReason.Exited },
    );
  }
  return s;
}

/** Writes a large prompt next to the socket so the agent can read it by reference. */
async function writePromptFile(ctx: HostContext, id: number, text: string): Promise<string> {
  const dir = `${ctx.socketPath.slice(0, ctx.socketPath.lastIndexOf("/"))}/prompts`;
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const path = `${dir}/surface-${id}-${Date.now()}.md`;
  await Deno.writeTextFile(path, text, { mode: 0o600 });
  return path;
}

function hook(ctx: HostContext, method: string, frame: HookFrame) {
  const s = ctx.registry.surface(frame.surface_id);
  ctx.agents.hook(method, frame);
  return ctx.agents.status(s);
}

const handlers: Handlers = {
  "system.ping": () => ({ pong: true, ts: Date.now() }),
  "system.identify": (ctx) => ({
    name: "paneflow",
    version: VERSION,
    protocol: PROTOCOL_VERSION,
    pid: Deno.pid,
    socket: ctx.socketPath,
    started_at: ctx.startedAt,
  }),
  "system.capabilities": (ctx) => ({
    scripting: gateOpen(ctx, "send"),
    keystrokes: gateOpen(ctx, "keystroke"),
    ai_unrestricted: ctx.config.ai_unrestricted,
    fence: ctx.config.ai_injection_fence,
    methods: [...Object.keys(methods), "events.subscribe"].filter((m) => {
      const gate = gatedMethods[m as Method];
      return !gate || gateOpen(ctx, gate);
    }),
  }),
  "system.shutdown": (ctx) => {
    setTimeout(ctx.shutdown, 0);
    return { ok: true };
  },
  "workspace.list": ({ registry }) => ({
    workspaces: registry.workspaces.map((ws) => registry.describeWorkspace(ws)),
  }),
  "workspace.current": ({ registry }) => registry.describeWorkspace(registry.workspaceAt()),
  "workspace.create": async ({ registry }, p) => {
    const { workspace, surface } = await registry.createWorkspace({
      ...p,
      title: p.name,
      name: p.pane_name,
    });
    return { ...registry.describeWorkspace(workspace), surface_id: surface.id };
  },
  "workspace.select": ({ registry }, p) => registry.describeWorkspace(registry.select(p.index)),
  "workspace.close": async ({ registry }, p) => {
    const ws = registry.workspaceAt(p.index);
    const index = registry.indexOf(ws);
    await registry.closeWorkspace(ws);
    return { closed: index };
  },
  "workspace.up": (ctx, p) => workspaceUp(ctx, p),
  "workspace.restore_layout": async ({ registry }, p) => {
    const ws = registry.workspaceAt(p.index);
    await registry.restoreLayout(ws, p.layout);
    return registry.describeWorkspace(ws);
  },
  "surface.list": ({ registry }, p) => {
    // A workspace that does not exist is an error, as everywhere else, not an empty list.
    const ws = p.workspace === undefined ? undefined : registry.workspaceAt(p.workspace);
    return {
      surfaces: [...registry.surfaces.values()]
        .filter((s) => ws === undefined || s.workspace === ws)
        .map((s) => registry.describe(s)),
    };
  },
  "surface.read": async (ctx, p) => {
    const s = ctx.registry.surface(p.surface_id);
    const lines = clamp(p.lines ?? 200, 1, 4000);
    const offset = p.offset ?? 0;
    if (p.since !== undefined && offset) {
      throw new RpcError(ErrorCode.InvalidParams, `"offset": cannot be combined with "since"`);
    }
    const r = await ctx.pool.read(s.id, lines, offset, p.since, p.join_wrapped);
    if (r.out_of_range) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        `"offset": ${offset} is out of range; pane ${s.id} holds ${r.total_lines} lines`,
      );
    }
    const text = r.lines.join("\n");
    const fenced = p.fenced ?? ctx.config.ai_injection_fence;
    return {
      surface_id: s.id,
      text: fenced ? fence(text) : text,
      lines: r.lines.length,
      total_lines: r.total_lines,
      eof: r.eof,
      output_generation: r.generation,
      fenced,
      ...(p.since === undefined ? {} : {
        since: p.since,
        reset: r.reset,
        // Pane text outside the fence: no closing sentinel may survive in it either.
        changed: fenced ? r.changed?.map((c) => ({ line: c.line, text: defang(c.text) })) : r.changed,
      }),
    };
  },
  "surface.search": async (ctx, p) => {
    const s = ctx.registry.surface(p.surface_id);
    const max = clamp(p.max_matches ?? 50, 1, 1000);
    const { hits } = await ctx.pool.search(s.id, p.pattern, max);
    return {
      surface_id: s.id,
      matches: hits.map((h) => ({ line: h.line + 1, text: h.text })),
      count: hits.length,
    };
  },
  "surface.rename": ({ registry }, p) => {
    const s = registry.surface(p.surface_id);
    registry.rename(s, p.name);
    return registry.describe(s);
  },
  "surface.focus": ({ registry }, p) => {
    const s = registry.surface(p.surface_id);
    registry.focus(s);
    return registry.describe(s);
  },
  "surface.status": async ({ registry, agents }, p) => {
    const s = registry.surface(p.surface_id);
    await agents.detectUntracked([s], true);
    return agents.status(s);
  },
  "surface.explain": async ({ registry, agents }, p) => {
    const s = registry.surface(p.surface_id);
    await agents.detectUntracked([s], true);
    return agents.explain(s);
  },
  "surface.close": async ({ registry }, p) => {
    const s = registry.surface(p.surface_id);
    await registry.closeSurface(s);
    return { closed: s.id };
  },
  "surface.send_text": async (ctx, p) => {
    const s = live(ctx.registry.surface(p.surface_id));
    const bytes = new TextEncoder().encode(p.text).length;
    if (bytes > MAX_SEND_BYTES) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        `"text": payload is ${bytes} bytes; the limit is ${MAX_SEND_BYTES}`,
      );
    }
    let bracketed = false;
    if (p.submit || p.paste) {
      const modes = await ctx.pool.modes(s.id);
      bracketed = modes.bracketed_paste;
    }
    // An agent started moments ago may not have been scanned yet.
    if (p.submit) await ctx.agents.detectUntracked([s]);
    if (p.submit && ctx.agents.toolOf(s.id)) {
      let text = p.text;
      let viaFile: string | null = null;
      if (bytes > LARGE_PROMPT_BYTES) {
        viaFile = await writePromptFile(ctx, s.id, p.text);
        text = `Read the file ${viaFile} and follow the instructions in it.`;
      }
      const r = await submitToAgent({
        pool: ctx.pool,
        agents: ctx.agents,
        id: s.id,
        text,
        bracketed,
        delayMs: submitDelayMs(ctx.config.submit_paste_delay_ms, bytes),
      });
      return {
        surface_id: s.id,
        bytes,
        bracketed,
        submitted: r.status === "submitted" || r.status === "queued",
        ...r,
        via_file: viaFile,
      };
    }
    const payload = bracketed ? `\x1b[200~${stripPasteEnd(p.text)}\x1b[201~` : p.text;
    if (payload) await ctx.pool.write(s.id, payload);
    if (p.submit) {
      await sleep(submitDelayMs(ctx.config.submit_paste_delay_ms, bytes));
      await ctx.pool.write(live(s).id, "\r");
    }
    return { surface_id: s.id, bytes, bracketed, submitted: p.submit ?? false };
  },
  "surface.send_keystroke": async (ctx, p) => {
    // A bad key name is the caller's mistake whatever state the pane is in: checked first.
    const named = keyBytes(p.keystroke);
    if ("error" in named) throw new RpcError(ErrorCode.InvalidParams, `"keystroke": ${named.error}`);
    const s = live(ctx.registry.surface(p.surface_id));
    const modes = await ctx.pool.modes(s.id);
    const key = keyBytes(p.keystroke, { applicationCursor: modes.application_cursor });
    await ctx.pool.write(s.id, "bytes" in key ? key.bytes : named.bytes);
    ctx.agents.noteKey(s.id, p.keystroke);
    return { surface_id: s.id, keystroke: p.keystroke };
  },
  "surface.split": async (ctx, p) => {
    const { registry } = ctx;
    if (p.managed_worktree !== undefined) {
      const target = p.surface_id === undefined ? null : registry.surface(p.surface_id);
      const s = await splitWithWorktree(ctx, {
        direction: p.direction,
        target,
        branch: p.managed_worktree,
        cwd: p.cwd,
        command: p.command,
        name: p.name,
        env: p.env,
        prompt: p.prompt,
      });
      return registry.describe(s);
    }
    const target = p.surface_id === undefined ? null : registry.surface(p.surface_id);
    const ws = target?.workspace ?? registry.workspaceAt();
    const s = await registry.addPane(ws, p, {
      target: target?.id ?? ws.focused,
      direction: p.direction,
    });
    return registry.describe(s);
  },
  "fleet.list": async ({ registry, agents }) => {
    await agents.detectUntracked(registry.surfaces.values(), true);
    return { agents: agents.fleet() };
  },
  "ai.session_start": (ctx, p) => hook(ctx, "ai.session_start", p),
  "ai.prompt_submit": (ctx, p) => hook(ctx, "ai.prompt_submit", p),
  "ai.tool_use": (ctx, p) => hook(ctx, "ai.tool_use", p),
  "ai.notification": (ctx, p) => hook(ctx, "ai.notification", p),
  "ai.stop": (ctx, p) => hook(ctx, "ai.stop", p),
  "ai.exit": (ctx, p) => hook(ctx, "ai.exit", p),
  "ai.session_end": (ctx, p) => hook(ctx, "ai.session_end", p),
  ...paneioHandlers,
};

/** A validated request, ready to run. */
export interface Request {
  id: unknown;
  method: string;
  params: unknown;
  notification: boolean;
}

/** Checks the JSON-RPC envelope; returns an error response when it is bad. */
export function parseEnvelope(value: unknown): Request | Response {
  const bad = (message: string, id: unknown = null): Response => ({
    jsonrpc: "2.0",
    id,
    error: { code: ErrorCode.InvalidRequest, message },
  });
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return bad("Invalid request: expected a JSON-RPC 2.0 object");
  }
  const v = value as Record<string, unknown>;
  const id = v.id;
  const idOk = id === undefined || id === null || typeof id === "string" ||
    (typeof id === "number" && Number.isFinite(id));
  if (!idOk) return bad(`Invalid request: "id" must be a string, number or null`);
  if (v.jsonrpc !== "2.0") return bad(`Invalid request: "jsonrpc" must be "2.0"`, id ?? null);
  if (typeof v.method !== "string" || !v.method) {
    return bad(`Invalid request: "method" must be a non-empty string`, id ?? null);
  }
  if (v.params !== undefined && v.params !== null && typeof v.params !== "object") {
    return bad(`Invalid request: "params" must be an object`, id ?? null);
  }
  return { id: id ?? null, method: v.method, params: v.params ?? {}, notification: id === undefined };
}

/** Runs one request and builds its response; never throws. */
export async function dispatch(ctx: HostContext, req: Request): Promise<Response> {
  try {
    const result = await call(ctx, req.method, req.params);
    return { jsonrpc: "2.0", id: req.id, result };
  } catch (err) {
    return { jsonrpc: "2.0", id: req.id, error: toWireError(err) };
  }
}

/** Runs a method by name with unvalidated params. */
export async function call(ctx: HostContext, method: string, params: unknown): Promise<unknown> {
  if (!Object.hasOwn(methods, method)) {
    throw new RpcError(ErrorCode.MethodNotFound, `Method not found: "${method}"`);
  }
  const m = method as Method;
  const gate = gatedMethods[m];
  if (gate && !gateOpen(ctx, gate)) {
    throw new RpcError(ErrorCode.MethodNotFound, gateMessage(m, gate), { reason: ErrorReason.Gated });
  }
  if (Array.isArray(params)) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Invalid params for ${m}: "params" must be an object of named fields, not an array`,
    );
  }
  let parsed;
  try {
    parsed = methods[m].safeParse(params);
  } catch (e) {
    // A recursive schema (a layout tree) on absurdly nested input overflows the stack.
    if (e instanceof RangeError) {
      throw new RpcError(ErrorCode.InvalidParams, `Invalid params for ${m}: params are nested too deeply`);
    }
    throw e;
  }
  if (!parsed.success) {
    throw new RpcError(ErrorCode.InvalidParams, `Invalid params for ${m}: ${describeZodError(parsed.error)}`);
  }
  // deno-lint-ignore no-explicit-any
  return await (handlers[m] as Handler<any>)(ctx, parsed.data);
}

/** The one place that turns a thrown value into a wire error. */
export function toWireError(err: unknown): { code: number; message: string; data?: unknown } {
  if (err instanceof RpcError) {
    return { code: err.code, message: err.message, ...(err.data ? { data: err.data } : {}) };
  }
  if (err instanceof z.ZodError) {
    return { code: ErrorCode.InvalidParams, message: describeZodError(err) };
  }
  const message = err instanceof Error ? err.message : String(err);
  console.error(`paneflow: internal error: ${err instanceof Error ? err.stack : message}`);
  return { code: ErrorCode.InternalError, message: `Internal error: ${message.split("\n")[0]}` };
}
