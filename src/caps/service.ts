/**
 * Least privilege between agents: every connection is classified once
 * (./identify.ts) and every call checked against the caller's grants
 * (./policy.ts's table) before its handler runs. A refusal is `-32001` with
 * `data: {reason: "capability", capability, target, caller}`, an event on
 * the bus (`capability_refused`), a count in `system.stats` and, for a pane
 * target, in its `surface.explain`. The owner and the host hold every
 * capability over `all` (the write gate still applies to them as before).
 *
 * @module
 */
import { RpcError } from "../errors.ts";
import { ErrorCode } from "../spec/codes.ts";
import {
  CAPABILITIES,
  type Capability,
  CAPABILITY_REASON,
  type CapsGrant,
  formatScope,
  GUEST_DEFAULTS,
  PANE_DEFAULTS,
  type Scope,
  TMUX_DEFAULTS,
} from "../spec/caps.ts";
import type { Config } from "../spec/config.ts";
import type { Connection } from "../core/connection.ts";
import { stateKey } from "../core/connection.ts";
import type { EventBus } from "../core/bus.ts";
import type { Registry, Surface } from "../core/registry.ts";
import { type Caller, callerName, classify, type HostFacts, selfStart } from "./identify.ts";
import { type Need, needsOf, type Target } from "./policy.ts";
import { selects } from "./select.ts";

export { selects };

/** The caller as `system.identify` gives it. */
export interface CallerDescription {
  kind: Caller["kind"];
  pid: number | null;
  surface_id?: number;
  name?: string | null;
  why: string;
  caps: Record<string, Scope>;
}

/** Calls refused with a pane as their target, and the last one. */
export interface RefusedCalls {
  count: number;
  last: { ts: number; method: string; capability: string; caller: string } | null;
}

/** Every capability with its scope: what a caller may do. */
export type Grants = Record<Capability, Scope>;

const ALL: Grants = Object.fromEntries(CAPABILITIES.map((c) => [c, "all"])) as Grants;

const CALLER = stateKey<{ caller: Caller | null }>("caps.caller", () => ({ caller: null }));

/** A pane's or guest's grants: none, then the defaults, then its own grant (per capability). */
export function effective(...grants: (CapsGrant | undefined)[]): Grants {
  const out = Object.fromEntries(CAPABILITIES.map((c) => [c, "none"])) as Grants;
  for (const g of grants) {
    for (const c of CAPABILITIES) if (g?.[c] !== undefined) out[c] = g[c]!;
  }
  return out;
}

/** The caps service: one per host. */
export class CapsService {
  readonly name = "caps";
  #refused = new Map<Capability, number>();
  #bySurface = new WeakMap<Surface, RefusedCalls>();
  #hostStart = selfStart();

  constructor(
    private readonly _config: Config,
    private readonly _registry: Registry,
    private readonly _bus: EventBus,
    private readonly _socketPath: string,
  ) {}

  /** Classifies a connection as it opens (socket peers; stdio is the owner, internal calls the host). */
  connected(conn: Connection): void {
    conn.state(CALLER).caller = this.#classify(conn);
  }

  #classify(conn: Connection): Caller {
    if (conn.kind === "internal") return { kind: "host", pid: Deno.pid, rule: "the host's own call" };
    if (conn.kind === "stdio") {
      return { kind: "owner", pid: null, rule: "serve --stdio: who started the host" };
    }
    if (!conn.peer) return { kind: "owner", pid: null, rule: "no peer credentials on this platform" };
    return classify(conn.peer, this.#facts());
  }

  #facts(): HostFacts {
    const registry = this._registry;
    return {
      pid: Deno.pid,
      uid: Deno.uid() ?? -1,
      start: this.#hostStart,
      hostId: registry.hostId,
      socketPath: this._socketPath,
      detached: this._config.caps.detached,
      panes: (function* () {
        for (const s of registry.surfaces.values()) if (!s.exit) yield { id: s.id, pid: s.pid };
      })(),
    };
  }

  /** Who is calling on `conn`. */
  callerOf(conn: Connection): Caller {
    const state = conn.state(CALLER);
    return state.caller ??= this.#classify(conn);
  }

  /** What a caller may do. */
  grantsOf(caller: Caller): Grants {
    switch (caller.kind) {
      case "owner":
      case "host":
        return ALL;
      case "guest":
        return effective(GUEST_DEFAULTS, this._config.caps.guest);
      case "pane":
        return this.paneGrants(this._registry.surfaces.get(caller.surface_id));
    }
  }

  /** A pane's grants: the config's defaults, then its own. */
  paneGrants(s: Surface | undefined): Grants {
    // A pane made for tmux's use (tmux_compat, or through the shim) drives its workspace as tmux would.
    const tmux = s?.env?.TMUX !== undefined ? TMUX_DEFAULTS : undefined;
    return effective(PANE_DEFAULTS, tmux, this._config.caps.pane, s?.caps);
  }

  /** Throws the refusal when `conn`'s caller may not make this call. */
  authorize(method: string, params: unknown, conn: Connection): void {
    const caller = this.callerOf(conn);
    if (caller.kind === "owner" || caller.kind === "host") return;
    const grants = this.grantsOf(caller);
    const needs = needsOf(method, params);
    if (needs === null) this.#refuse(caller, method, { capability: "admin", target: { host: true } }, grants);
    for (const need of needs ?? []) {
      if (!this.#covers(grants[need.capability], need.target, caller)) {
        this.#refuse(caller, method, need, grants);
      }
    }
    for (const grant of grantsIn(method, params)) this.#checkGrant(caller, method, grants, grant);
  }

  /** Whether `conn`'s caller may see this pane's events. */
  mayRead(conn: Connection, surfaceId: number): boolean {
    const caller = this.callerOf(conn);
    if (caller.kind === "owner" || caller.kind === "host") return true;
    return this.#covers(this.grantsOf(caller).read, { surface_id: surfaceId }, caller);
  }

  /**
   * A caller may give a new pane only what it holds itself: any scope when
   * it holds `all`; `self` (the new pane itself) and `none` always; else
   * each item of the scope must be one the caller holds (`workspace`, or
   * the same selector).
   */
  #checkGrant(caller: Caller, method: string, grants: Grants, grant: CapsGrant): void {
    for (const c of CAPABILITIES) {
      const want = grant[c];
      if (want === undefined || narrower(want, grants[c])) continue;
      this.#refuse(caller, method, { capability: c, target: { host: true } }, grants, {
        message: `${callerName(caller, this.#nameOf)} may not grant ${c} = ${
          JSON.stringify(want)
        } to a new pane: it holds ${c} = ${JSON.stringify(grants[c])}, and a pane grants only what it holds`,
      });
    }
  }

  #nameOf = (id: number) => this._registry.surfaces.get(id)?.name ?? null;

  #covers(scope: Scope, target: Target, caller: Caller): boolean {
    if (scope === "all") return true;
    if (scope === "none" || "host" in target) return false;
    const me = caller.kind === "pane" ? this._registry.surfaces.get(caller.surface_id) : undefined;
    const items = typeof scope === "string" ? [scope] : scope;
    if ("workspace" in target) {
      if (!me || !items.includes("workspace")) return false;
      try {
        return this._registry.workspaceAt(target.workspace ?? undefined) === me.workspace;
      } catch {
        return false; // no such workspace: the handler says so to those who may ask
      }
    }
    const s = this._registry.surfaces.get(target.surface_id);
    for (const item of items) {
      if (item === "self" && me && target.surface_id === me.id) return true;
      if (item === "workspace" && me && s?.workspace === me.workspace) return true;
      if (item !== "self" && item !== "workspace" && s && selects(item, s)) return true;
    }
    return false;
  }

  #refuse(
    caller: Caller,
    method: string,
    need: Need,
    grants: Grants,
    opts: { message?: string } = {},
  ): never {
    const who = callerName(caller, this.#nameOf);
    const what = targetName(need.target, this.#nameOf);
    this.#refused.set(need.capability, (this.#refused.get(need.capability) ?? 0) + 1);
    const callerData = {
      kind: caller.kind,
      pid: caller.pid,
      ...(caller.kind === "pane" ? { surface_id: caller.surface_id } : {}),
    };
    const s = "surface_id" in need.target ? this._registry.surfaces.get(need.target.surface_id) : undefined;
    if (s) {
      const rec = this.#bySurface.get(s) ?? { count: 0, last: null };
      rec.count++;
      rec.last = { ts: Date.now(), method, capability: need.capability, caller: who };
      this.#bySurface.set(s, rec);
    }
    this._bus.publish({
      type: "capability_refused",
      ...(s ? { surface_id: s.id } : {}),
      method,
      capability: need.capability,
      target: need.target,
      caller: callerData,
    });
    const message = opts.message ??
      `${method} refused: ${who} may not ${need.capability} ${what}; ${
        hint(caller, need, grants[need.capability], this.#nameOf)
      }`;
    throw new RpcError(ErrorCode.Permission, message, {
      reason: CAPABILITY_REASON,
      capability: need.capability,
      target: need.target,
      caller: callerData,
    });
  }

  /** Refusals so far, in total and per capability (`system.stats`). */
  stats(): { refused: number; by_capability: Record<string, number> } {
    const by = Object.fromEntries(this.#refused);
    return { refused: Object.values(by).reduce((a, b) => a + b, 0), by_capability: by };
  }

  /** Calls refused with this pane as their target (`surface.explain`). */
  refusedOn(s: Surface): RefusedCalls {
    return this.#bySurface.get(s) ?? { count: 0, last: null };
  }

  /** The caller and its grants, as `system.identify` and `paneflow whoami` show them. */
  describeCaller(conn: Connection): CallerDescription {
    const caller = this.callerOf(conn);
    const name = caller.kind === "pane" ? this.#nameOf(caller.surface_id) : null;
    return {
      kind: caller.kind,
      pid: caller.pid,
      ...(caller.kind === "pane" ? { surface_id: caller.surface_id, name } : {}),
      why: caller.rule,
      caps: describeGrants(this.grantsOf(caller)),
    };
  }
}

/** Whether a scope given to a new pane stays within the giver's own. */
function narrower(want: Scope, held: Scope): boolean {
  if (held === "all" || want === "none" || want === "self") return true;
  if (want === "all" || held === "none") return false;
  const heldItems = typeof held === "string" ? [held] : held;
  const wantItems = typeof want === "string" ? [want] : want;
  return wantItems.every((item) => item === "self" || heldItems.includes(item));
}

/** Grants as shown: `{read: "workspace", write: ["worker-*"]}` without the `none`s. */
export function describeGrants(grants: Grants): Record<string, Scope> {
  return Object.fromEntries(Object.entries(grants).filter(([, s]) => s !== "none"));
}

/** The grants a call would give new panes (split/create's `caps`, up's panes' `caps`). */
function grantsIn(method: string, params: unknown): CapsGrant[] {
  const p = params as { caps?: CapsGrant; panes?: { caps?: CapsGrant }[] } | null;
  if (!p || typeof p !== "object") return [];
  if (method === "surface.split" || method === "workspace.create") return p.caps ? [p.caps] : [];
  if (method === "workspace.up") return (p.panes ?? []).flatMap((pane) => pane.caps ? [pane.caps] : []);
  return [];
}

function targetName(target: Target, nameOf: (id: number) => string | null): string {
  if ("host" in target) return "the host (a grant over all)";
  if ("workspace" in target) {
    return target.workspace === null ? "the active workspace" : `workspace ${target.workspace}`;
  }
  const name = nameOf(target.surface_id);
  return `pane ${target.surface_id}${name ? ` "${name}"` : ""}`;
}

/** The grant that would allow it, in the caps TOML form. */
function hint(caller: Caller, need: Need, held: Scope, nameOf: (id: number) => string | null): string {
  const has = `it holds ${need.capability} = ${JSON.stringify(held)}`;
  if (caller.kind === "guest") {
    return `${has} (a guest: ${caller.rule}); the config's caps.guest grants guests more`;
  }
  const t = need.target;
  const name = "surface_id" in t ? nameOf(t.surface_id) : null;
  const wanted = "host" in t ? '"all"' : "workspace" in t ? '"workspace"' : `["${name ?? t.surface_id}"]`;
  return `${has}; caps = { ${need.capability} = ${wanted} } on the pane would allow it`;
}

export { formatScope };
