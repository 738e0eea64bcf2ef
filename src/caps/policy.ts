/**
 * What each method needs: a capability over a target, per method, as data.
 * Every method of the protocol has an entry (`Record<Method, ...>`: a new
 * method without one is a compile error), and so does every method of
 * ptywright's family (tests/caps_test.ts walks their lists).
 *
 * Targets: a pane (`surface_id`), a workspace (index or `w<N>`; absent:
 * the active one), or `host` (the host as a whole: only a grant over `all`
 * covers it). A method with no need is open to every caller; listings are
 * (names, ids, commands: what `ps` shows).
 *
 * @module
 */
import type { Method, Params } from "../spec/protocol.ts";
import type { Capability } from "../spec/caps.ts";

/** What a call acts on. */
export type Target =
  | { surface_id: number }
  | { workspace: number | string | null }
  | { host: true };

/** One capability a call needs, over its target. */
export interface Need {
  capability: Capability;
  target: Target;
}

type Rule<M extends Method> = (p: Params<M>) => Need[];

const HOST: Target = { host: true };
const none = () => [];
const on = (capability: Capability) => (p: { surface_id: number }): Need[] => [
  { capability, target: { surface_id: p.surface_id } },
];
const onWorkspace = (capability: Capability) => (p: { index?: number | string }): Need[] => [
  { capability, target: { workspace: p.index ?? null } },
];
const onHost = (capability: Capability) => (): Need[] => [{ capability, target: HOST }];

/** The table for the protocol's methods. */
export const METHOD_NEEDS: { [M in Method]: Rule<M> } = {
  "system.ping": none,
  "system.capabilities": none,
  "system.identify": none,
  "system.hello": none,
  "system.stats": none,
  "system.clients": onHost("admin"),
  "system.shutdown": onHost("admin"),
  "workspace.list": none,
  "workspace.current": none,
  "surface.list": none,
  "fleet.list": none,
  "queue.info": none,
  "workspace.create": onHost("manage"),
  "workspace.up": onHost("manage"),
  "workspace.select": onWorkspace("manage"),
  "workspace.rename": onWorkspace("manage"),
  // Notifications: the sinks (their URLs are secrets), a test send, the web's URL, a reply link's press.
  "notify.ls": onHost("admin"),
  "notify.test": onHost("admin"),
  "notify.web": onHost("admin"),
  "notify.reply": onHost("admin"),
  // What agents spend is shown like a listing (ps shows it); a budget is the owner's to set or raise.
  "usage.get": none,
  "usage.budget": onHost("admin"),
  // The last host's journal: what it ran, where; bringing it back makes workspaces.
  "restore.plan": onHost("read"),
  "restore.run": onHost("manage"),
  "workspace.close": onWorkspace("manage"),
  "workspace.restore_layout": onWorkspace("manage"),
  "surface.read": on("read"),
  "surface.screen": on("read"),
  "surface.search": on("read"),
  "surface.status": on("read"),
  "surface.explain": on("read"),
  "surface.is_ready": on("read"),
  "surface.rename": on("manage"),
  "surface.focus": on("manage"),
  "surface.close": on("manage"),
  // Runs another program in the pane: as much as closing it and making a new one.
  "surface.respawn": on("manage"),
  "surface.split": (p) => [{
    capability: "manage",
    target: p.surface_id === undefined ? { workspace: null } : { surface_id: p.surface_id },
  }],
  "surface.send_text": (p) => [
    { capability: "write", target: { surface_id: p.surface_id } },
    ...(p.submit ? [{ capability: "submit" as const, target: { surface_id: p.surface_id } }] : []),
  ],
  "surface.send_keystroke": on("write"),
  // Answering an agent's dialog (a permission prompt) confirms as a submit does.
  "surface.answer": (p) => [
    { capability: "write", target: { surface_id: p.surface_id } },
    { capability: "submit", target: { surface_id: p.surface_id } },
  ],
  "surface.clear": on("write"),
  "surface.ask": (p) => [
    { capability: "write", target: { surface_id: p.surface_id } },
    ...(p.submit === false ? [] : [{ capability: "submit" as const, target: { surface_id: p.surface_id } }]),
  ],
  "ai.session_start": on("hook"),
  "ai.prompt_submit": on("hook"),
  "ai.tool_use": on("hook"),
  "ai.notification": on("hook"),
  "ai.stop": on("hook"),
  "ai.exit": on("hook"),
  "ai.session_end": on("hook"),
};

/**
 * ptywright's family (`server.*`, `session.*`, `adapter.*`, `plugin.*`):
 * its sessions and adapters are the host's, so a pane needs the
 * capability over `all`.
 */
export const FAMILY_NEEDS: Record<string, Capability | null> = {
  "server.capabilities": null,
  "server.set_notifications": null,
  "session.create": "manage",
  "session.list": null,
  "session.close": "manage",
  "session.kill": "manage",
  "session.resize": "manage",
  "session.input": "write",
  "session.snapshot": "read",
  "session.transcript": "read",
  "session.wait": "read",
  "adapter.list": null,
  "adapter.live": null,
  "adapter.start": "manage",
  "adapter.resume": "manage",
  "adapter.state": "read",
  "adapter.send": "write",
  "adapter.wait": "read",
  "adapter.cancel_wait": "read",
  "adapter.turn": "write",
  "adapter.snapshot": "read",
  "adapter.transcript": "read",
  "adapter.inspect": "read",
  "adapter.close": "manage",
  "plugin.capabilities": null,
  "plugin.validate_manifest": null,
  "plugin.describe": null,
  "plugin.load": "admin",
  "plugin.unload": "admin",
};

/** What a call needs; `null` for a method the table does not know (refused for all but the owner). */
export function needsOf(method: string, params: unknown): Need[] | null {
  if (Object.hasOwn(METHOD_NEEDS, method)) {
    // deno-lint-ignore no-explicit-any
    return (METHOD_NEEDS as Record<string, Rule<any>>)[method](params);
  }
  if (Object.hasOwn(FAMILY_NEEDS, method)) {
    const capability = FAMILY_NEEDS[method];
    return capability ? [{ capability, target: HOST }] : [];
  }
  return null;
}
