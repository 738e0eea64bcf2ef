/**
 * paneflow's entries in Claude Code's `settings.json` hooks: add, find and
 * remove only ours (tagged with {@link MARKER}), leaving the user's own hooks
 * untouched. Pure functions over parsed JSON; `hooks.ts` does the file I/O.
 *
 * @module
 */

/** Tag at the end of every command we install (a shell comment). */
export const MARKER = "# paneflow-managed";

/** The Claude Code hook events paneflow listens to. */
export const HOOK_EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PermissionRequest",
  "Notification",
  "Stop",
  "StopFailure",
  "SessionEnd",
] as const;

type Json = Record<string, unknown>;
/** One hook handler. */
export interface HookEntry {
  type?: string;
  command?: string;
  [k: string]: unknown;
}
/** One matcher group of an event's hooks. */
export interface HookGroup {
  matcher?: string;
  hooks?: HookEntry[];
  [k: string]: unknown;
}

function isOurs(h: HookEntry): boolean {
  return typeof h.command === "string" && h.command.includes(MARKER);
}

function groupsOf(settings: Json, event: string): HookGroup[] {
  const hooks = settings.hooks;
  if (!hooks || typeof hooks !== "object") return [];
  const groups = (hooks as Json)[event];
  return Array.isArray(groups) ? groups as HookGroup[] : [];
}

/**
 * What is wrong with the shape of `settings.hooks` (Claude Code's: an object
 * of event names to lists of `{matcher?, hooks: [{type, command}]}` groups),
 * or null. Checked before reading or editing, so a value of the user's that
 * we do not understand is reported, never dropped or misread.
 */
export function hooksShapeProblem(settings: Json): string | null {
  const hooks = settings.hooks;
  if (hooks === undefined) return null;
  const isObject = (v: unknown) => v !== null && typeof v === "object" && !Array.isArray(v);
  if (!isObject(hooks)) return `"hooks" is not an object`;
  for (const [event, groups] of Object.entries(hooks as Json)) {
    if (!Array.isArray(groups)) return `"hooks.${event}" is not a list`;
    for (const [i, g] of groups.entries()) {
      if (!isObject(g)) return `"hooks.${event}[${i}]" is not an object`;
      const entries = (g as HookGroup).hooks;
      if (entries === undefined) continue;
      if (!Array.isArray(entries)) return `"hooks.${event}[${i}].hooks" is not a list`;
      if (!entries.every(isObject)) {
        return `"hooks.${event}[${i}].hooks" holds something that is not an object`;
      }
    }
  }
  return null;
}

/** Which events have our hook installed, and with which command (`events`: another agent's list). */
export function hookStatus(
  settings: Json,
  events: readonly string[] = HOOK_EVENTS,
): { event: string; command: string | null }[] {
  return events.map((event) => {
    for (const g of groupsOf(settings, event)) {
      const ours = (g.hooks ?? []).find(isOurs);
      if (ours) return { event, command: ours.command! };
    }
    return { event, command: null };
  });
}

/** Settings without any of our entries. */
export function removeHooks(settings: Json): { settings: Json; changed: boolean } {
  const next = structuredClone(settings);
  const hooks = next.hooks;
  if (!hooks || typeof hooks !== "object" || Array.isArray(hooks)) return { settings: next, changed: false };
  let changed = false;
  for (const [event, groups] of Object.entries(hooks as Json)) {
    if (!Array.isArray(groups)) continue;
    const kept: HookGroup[] = [];
    for (const g of groups as HookGroup[]) {
      if (!Array.isArray(g?.hooks)) {
        kept.push(g);
        continue;
      }
      const rest = g.hooks.filter((h) => !isOurs(h));
      if (rest.length !== g.hooks.length) changed = true;
      if (rest.length) kept.push({ ...g, hooks: rest });
    }
    if (kept.length) (hooks as Json)[event] = kept;
    else delete (hooks as Json)[event];
  }
  if (Object.keys(hooks as Json).length === 0) delete next.hooks;
  return { settings: next, changed };
}

/**
 * Settings with our hook on every event; `command(event)` is the command
 * without the marker. Another agent with the same hooks shape passes its
 * `events` and the `group` it wants for one command (Gemini CLI: a matcher,
 * a name and a timeout in ms).
 */
export function installHooks(
  settings: Json,
  command: (event: string) => string,
  events: readonly string[] = HOOK_EVENTS,
  group: (event: string, command: string) => HookGroup = (_e, c) => ({
    hooks: [{ type: "command", command: c, timeout: 10 }],
  }),
): { settings: Json; changed: boolean } {
  const current = hookStatus(settings, events);
  const wanted = events.map((e) => `${command(e)} ${MARKER}`);
  if (current.every((c, i) => c.command === wanted[i])) {
    return { settings: structuredClone(settings), changed: false };
  }
  const { settings: next } = removeHooks(settings);
  if (next.hooks !== undefined && (typeof next.hooks !== "object" || Array.isArray(next.hooks))) {
    throw new Error(`"hooks" is not an object`);
  }
  const hooks = (next.hooks ?? {}) as Json;
  events.forEach((event, i) => {
    const groups = Array.isArray(hooks[event]) ? hooks[event] as HookGroup[] : [];
    groups.push(group(event, wanted[i]));
    hooks[event] = groups;
  });
  next.hooks = hooks;
  return { settings: next, changed: true };
}
