/**
 * Capability names and scope words, without zod: the CLI path imports this
 * (./caps.ts has the schemas).
 *
 * @module
 */

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
