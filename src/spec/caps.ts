/**
 * Capabilities: what a program in a pane may do through the socket. The
 * grant format (up/flow TOML `caps = {...}`, `new/split --caps`, the
 * `caps` params field, config `caps.pane` / `caps.guest`), the names, and
 * the refusal's `reason`. The model is docs/security.md's; the checking is
 * src/caps/.
 *
 * @module
 */
import { z } from "zod";

import { CAPABILITIES, type Capability, SCOPE_WORDS } from "./caps_names.ts";

export * from "./caps_names.ts";

/**
 * A selector in a scope list: a pane name, a glob over names (`worker-*`,
 * `?` one character), or a pane id; `self` and `workspace` may be listed too.
 */
const Selector = z.string().min(1).max(256).refine(
  (s) => !/\p{Cc}/u.test(s),
  "a selector has no control characters",
)
  .refine((s) => s !== "none" && s !== "all", 'write "none" or "all" alone, not in a list');

/** A scope: one word, or a list of selectors. */
export const Scope = z.union([
  z.enum(SCOPE_WORDS),
  z.array(Selector).min(1, "a scope list names at least one pane"),
]).describe('"none", "self", "workspace", "all", or a list of selectors (["worker-*", "reviewer"])');

/** A scope as written. */
export type Scope = z.infer<typeof Scope>;

/** A grant: capabilities with their scopes (a capability left out keeps its default). */
export const CapsGrant = z.strictObject(
  Object.fromEntries(CAPABILITIES.map((c) => [c, Scope.optional()])) as Record<
    Capability,
    z.ZodOptional<typeof Scope>
  >,
).describe('Capabilities over scopes, e.g. { write = ["worker-*"], read = "workspace" }');

/** A grant as written. */
export type CapsGrant = Partial<Record<Capability, Scope>>;

/** What a pane may do when neither the config nor its own grant says otherwise. */
export const PANE_DEFAULTS: CapsGrant = { read: "workspace", msg: "workspace", hook: "self" };

/**
 * What a pane made for tmux's use (`tmux_compat`, or through the tmux shim) may do besides: an
 * agent that drives tmux (Claude Code's teams) splits, types into and closes its workspace's panes.
 */
export const TMUX_DEFAULTS: CapsGrant = { write: "workspace", submit: "workspace", manage: "workspace" };

/** What a guest may do when the config does not say otherwise. */
export const GUEST_DEFAULTS: CapsGrant = { read: "all" };

/** The config section `caps`: the defaults, capability by capability over the built-in ones. */
export const CapsConfig = z.strictObject({
  pane: CapsGrant.default({})
    .describe("What a pane may do unless its own grant says otherwise (over PANE_DEFAULTS)"),
  guest: CapsGrant.default({})
    .describe("What a guest may do: a caller in no pane that carries a pane's marker, or is detached"),
  detached: z.enum(["guest", "owner"]).default("guest").describe(
    "A caller without a terminal that descends from a process detached after the host started " +
      "(orphaned, no marker): a guest (default), or the owner where every client runs so (CI, docker exec)",
  ),
}).prefault({});

/** A grant in the CLI form (for `paneflow caps` and `ps`). */
export function formatScope(scope: Scope): string {
  return typeof scope === "string" ? scope : scope.join(",");
}

const Int = z.number().int();

/** Capabilities with their scopes, `none`s left out (results: `caps`). */
export const Grants = z.record(z.string(), z.union([z.string(), z.array(z.string())]));

/** A pane's capabilities in a result (`ls --json`, `ps --json`). */
export const PaneCaps = Grants.optional().describe(
  "What the pane may do through the socket (docs/security.md)",
);

/** Who is calling (`system.identify`'s `caller`, `paneflow whoami`). */
export const CallerDescription = z.object({
  kind: z.enum(["owner", "pane", "guest", "host"]),
  pid: Int.nullable(),
  surface_id: Int.min(1).optional(),
  name: z.string().nullable().optional(),
  why: z.string().describe("The classification rule that decided it (docs/security.md)"),
  caps: Grants,
});

/** `system.stats`'s `caps`. */
export const CapsStats = z.object({ refused: Int, by_capability: z.record(z.string(), Int) })
  .describe("Calls refused for want of a capability");

/** `surface.explain`'s `refused_calls`. */
export const RefusedCalls = z.object({
  count: Int,
  last: z.object({ ts: Int, method: z.string(), capability: z.string(), caller: z.string() }).nullable(),
}).describe("Calls aimed at this pane that were refused for want of a capability");
