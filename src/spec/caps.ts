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

/** Every capability, in the order they are shown. */
export const CAPABILITIES = ["read", "write", "submit", "manage", "msg", "admin", "hook"] as const;

/** A capability's name. */
export type Capability = (typeof CAPABILITIES)[number];

/** What each capability allows (`paneflow caps --help`, docs/security.md). */
export const CAPABILITY_HELP: Record<Capability, string> = {
  read: "read, search, screen, status, explain; watch that pane's events",
  write: "send, paste, key, ask, clear",
  submit: "send --submit and ask (press Enter after the text)",
  manage: "new, split, close, rename, focus, layout, workspaces",
  msg: "queue messages to the pane",
  admin: "shutdown, plugin load and unload, clients; the host itself",
  hook: "post the pane's ai-hook frames",
};

/** The words a scope may be besides selectors. */
export const SCOPE_WORDS = ["none", "self", "workspace", "all"] as const;

/** The `reason` of a refusal for want of a capability. */
export const CAPABILITY_REASON = "capability";

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

/** The config section `caps`: the defaults. */
export const CapsConfig = z.strictObject({
  pane: CapsGrant.default({ read: "workspace", msg: "workspace", hook: "self" })
    .describe("What a pane may do unless its own grant says otherwise"),
  guest: CapsGrant.default({ read: "all" })
    .describe("What a guest may do: a caller started in no pane that is orphaned and carries no marker"),
}).prefault({});

/**
 * Parses the CLI form: `write=worker-*,reviewer`, `read=workspace`,
 * `manage=none` (each `--caps` one or several, space separated). Throws
 * an Error with one clear line.
 */
export function parseCapsFlags(values: string[]): CapsGrant {
  const out: CapsGrant = {};
  for (const item of values.flatMap((v) => v.split(/\s+/)).filter(Boolean)) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new Error(`--caps takes <capability>=<scope>, got "${item}"`);
    const name = item.slice(0, eq);
    if (!(CAPABILITIES as readonly string[]).includes(name)) {
      throw new Error(`Unknown capability "${name}"; one of ${CAPABILITIES.join(", ")}`);
    }
    const value = item.slice(eq + 1);
    if (!value) throw new Error(`--caps ${name}= needs a scope: none, self, workspace, all or selectors`);
    const words = SCOPE_WORDS as readonly string[];
    const scope: Scope = words.includes(value) ? value as Scope : value.split(",").filter(Boolean);
    const parsed = Scope.safeParse(scope);
    if (!parsed.success) {
      throw new Error(`--caps ${name}: ${parsed.error.issues[0].message}`);
    }
    out[name as Capability] = parsed.data;
  }
  return out;
}

/** A grant in the CLI form (for `paneflow caps` and `ps`). */
export function formatScope(scope: Scope): string {
  return typeof scope === "string" ? scope : scope.join(",");
}
