/**
 * ptywright's `adapter.*` and `plugin.*` families (docs/plugins.md): validation,
 * permission gating per method, and dispatch into src/plugins/. The
 * handlers only translate; the work is in src/plugins/.
 *
 * @module
 */
import type { z } from "zod";
import { RpcError } from "../../errors.ts";
import { describePwZodError, pluginParams, PwError } from "../../spec/ptywright.ts";
import { type Policy, policyOf, redact } from "../../session/redact.ts";
import type { Connection } from "../../core/connection.ts";
import type { HostContext } from "../context.ts";
import { permissionDenied, pluginLoadDenied } from "../../plugins/errors.ts";
import type { PluginHost } from "../../plugins/service.ts";
import { validateManifest } from "../../plugins/manifest.ts";
import { splitStatusBar } from "../../plugins/types.ts";
import { extraPtywrightMethods } from "./server.ts";
import { redactSnapshot } from "./session.ts";
import type { Reply } from "./_types.ts";

const schemas = pluginParams;

type M = keyof typeof schemas;
type P<K extends M> = z.infer<(typeof schemas)[K]>;
type Handler<K extends M> = (
  host: PluginHost,
  p: P<K>,
  ctx: HostContext,
  conn: Connection,
) => Promise<Reply<K>> | Reply<K>;

/** The permission each adapter method needs (ptywright's ADAPTER_METHOD_PERMISSIONS). */
const REQUIRED: Partial<Record<M, string[]>> = {
  "adapter.start": ["session.spawn"],
  "adapter.resume": ["session.spawn"],
  "adapter.send": ["input.write"],
  "adapter.wait": ["matcher.wait"],
  "adapter.turn": ["input.write", "matcher.wait"],
  "adapter.snapshot": ["screen.read"],
  "adapter.inspect": ["screen.read"],
  "adapter.state": ["screen.read"],
  "adapter.transcript": ["transcript.read"],
  "adapter.close": ["session.kill"],
};

function gate(method: M, permissions: readonly string[]) {
  const need = REQUIRED[method] ?? [];
  need.forEach((perm, i) => {
    if (!permissions.includes(perm)) {
      // adapter.turn is checked as adapter.send, then adapter.wait.
      const as = method === "adapter.turn" ? (i === 0 ? "adapter.send" : "adapter.wait") : method;
      throw permissionDenied(as, perm);
    }
  });
}

const gateAdapter = (host: PluginHost, method: M, id: string) =>
  gate(method, host.adapters.get(id).manifest.permissions);

/** The last 4096 bytes of `text`, moved forward to a character boundary. */
function tailBytes(text: string, max = 4096): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= max) return text;
  let start = bytes.length - max;
  while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++;
  return new TextDecoder().decode(bytes.subarray(start));
}

async function start(host: PluginHost, p: P<"adapter.start">, ctx: HostContext) {
  gate("adapter.start", host.registry.get(p.plugin).manifest.permissions);
  void ctx;
  return await host.adapters.start(p);
}

const handlers: { [K in M]: Handler<K> } = {
  "adapter.list": (host) => ({ plugins: host.registry.list() }),
  "adapter.live": (host) => ({ adapters: host.adapters.live() }),
  "adapter.start": (host, p, ctx) => start(host, p, ctx),
  "adapter.resume": async (host, p, ctx) => {
    const { prior_adapter, ...rest } = p;
    gate("adapter.resume", host.registry.get(p.plugin).manifest.permissions);
    if (prior_adapter) await host.adapters.close(prior_adapter).catch(() => {});
    return await start(host, rest, ctx);
  },
  "adapter.state": async (host, p) => {
    gateAdapter(host, "adapter.state", p.adapter);
    return { state: await host.adapters.state(p.adapter) };
  },
  "adapter.send": async (host, p) => {
    gateAdapter(host, "adapter.send", p.adapter);
    return { state: await host.adapters.send(p.adapter, p.intent, p.params) };
  },
  "adapter.wait": async (host, p) => {
    gateAdapter(host, "adapter.wait", p.adapter);
    const { adapter, ...o } = p;
    return await host.adapters.wait(adapter, o);
  },
  "adapter.turn": async (host, p) => {
    gateAdapter(host, "adapter.turn", p.adapter);
    return await host.adapters.turn(p.adapter, p.send, p.wait ?? {});
  },
  "adapter.cancel_wait": (host, p) => host.adapters.cancelWait(p.wait_id),
  "adapter.snapshot": async (host, p, ctx) => {
    const policy = policyOf(p.redact, p.redaction);
    gateAdapter(host, "adapter.snapshot", p.adapter);
    const a = host.adapters.get(p.adapter);
    return redactSnapshot(await ctx.sessions.snapshot(a.session.id), policy);
  },
  "adapter.transcript": async (host, p, ctx) => {
    const policy = policyOf(p.redact, p.redaction);
    gateAdapter(host, "adapter.transcript", p.adapter);
    const a = host.adapters.get(p.adapter);
    return { text: redact(await ctx.sessions.transcript(a.session.id), policy) };
  },
  "adapter.inspect": async (host, p, ctx) => {
    const policy: Policy | null = policyOf(p.redact, p.redaction);
    gateAdapter(host, "adapter.inspect", p.adapter);
    return await host.adapters.locked(p.adapter, async (a) => {
      const snap = await ctx.sessions.snapshot(a.session.id);
      const state = a.lastState ?? null;
      const plain = redact(snap.plain_text, policy);
      const { body, status } = splitStatusBar(plain);
      const transcript = await ctx.sessions.transcript(a.session.id);
      return {
        adapter: a.id,
        plugin: a.plugin,
        session: a.session.id,
        state,
        plain_text: plain,
        body_text: body,
        status_text: status,
        transcript_tail: redact(tailBytes(transcript), policy),
        sequence: snap.sequence,
      };
    });
  },
  "adapter.close": async (host, p) => {
    gateAdapter(host, "adapter.close", p.adapter);
    await host.adapters.close(p.adapter);
    return { closed: true };
  },
  "plugin.capabilities": (host) => host.registry.capabilities(),
  "plugin.validate_manifest": (_host, p) => {
    try {
      validateManifest(p.manifest);
    } catch (e) {
      throw new RpcError(PwError.InvalidParams, (e as Error).message, undefined, { cause: e });
    }
    return { valid: true };
  },
  "plugin.describe": (host, p) => host.registry.describe(p.plugin),
  "plugin.load": async (host, p) => {
    if (!host.allowLoad) throw pluginLoadDenied("plugin.load");
    return { plugin: await host.registry.load(p.manifest_path) };
  },
  "plugin.unload": (host, p) => {
    if (!host.allowLoad) throw pluginLoadDenied("plugin.unload");
    host.registry.unload(p.plugin, host.adapters.hasLive(p.plugin));
    return { unloaded: true };
  },
};

/** The family's methods, in ptywright's order. */
export const PLUGIN_METHODS = Object.keys(schemas) as M[];
extraPtywrightMethods.push(...PLUGIN_METHODS);

/** Whether a method belongs to this family. */
export function isPluginMethod(method: string): boolean {
  return method.startsWith("adapter.") || method.startsWith("plugin.");
}

/** Calls one method of the family (params already checked to be an object). */
export async function callPlugins(ctx: HostContext, method: string, params: unknown, conn: Connection) {
  if (!Object.hasOwn(schemas, method)) {
    throw new RpcError(PwError.MethodNotFound, `unknown method: ${method}`);
  }
  const host = ctx.plugins;
  const m = method as M;
  let parsed;
  try {
    parsed = (schemas[m] as z.ZodType).safeParse(params);
  } catch {
    throw new RpcError(PwError.InvalidParams, "params are nested too deeply");
  }
  if (!parsed.success) throw new RpcError(PwError.InvalidParams, describePwZodError(parsed.error));
  return await (handlers[m] as Handler<M>)(host, parsed.data as never, ctx, conn);
}
