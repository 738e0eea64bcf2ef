/**
 * The error table of each method family: which codes its methods answer
 * with and what each means there. paneflow's families use paneflow's codes
 * (./codes.ts); ptywright's (`server.*`, `session.*`, `adapter.*`,
 * `plugin.*`) use ptywright's (./ptywright.ts), where -32001 is a matcher
 * timeout, not a refused permission. Rendered into docs/protocol.md by
 * `deno task docs`.
 *
 * No dependencies: constants only.
 *
 * @module
 */
import { ErrorCode, ErrorReason, MAX_CONNECTIONS } from "./codes.ts";
import { PwError } from "./ptywright.ts";

/** One row of a family's error table. */
export interface ErrorRow {
  code: number;
  /** The constant's name (`ErrorCode.*` or `PwError.*`). */
  name: string;
  /** When the family's methods answer with it. */
  meaning: string;
}

/** Rows every paneflow family shares (the envelope and the dispatcher's). */
export const PANEFLOW_COMMON: ErrorRow[] = [
  { code: ErrorCode.ParseError, name: "ParseError", meaning: "bad JSON or invalid UTF-8" },
  {
    code: ErrorCode.InvalidRequest,
    name: "InvalidRequest",
    meaning: "bad envelope; a line over 1 MiB (then the connection closes)",
  },
  {
    code: ErrorCode.MethodNotFound,
    name: "MethodNotFound",
    meaning: `no such method, or a gated one while its gate is closed (data.reason "${ErrorReason.Gated}")`,
  },
  {
    code: ErrorCode.InvalidParams,
    name: "InvalidParams",
    meaning: "params fail the method's schema, naming the field",
  },
  { code: ErrorCode.InternalError, name: "InternalError", meaning: "a short message; never a stack" },
  {
    code: ErrorCode.Backpressure,
    name: "Backpressure",
    meaning: `more than ${MAX_CONNECTIONS} connections (the excess one gets this and is closed)`,
  },
];

const targetRows = (what: string): ErrorRow => ({
  code: ErrorCode.InvalidParams,
  name: "InvalidParams",
  meaning: what,
});

/** Rows every ptywright family shares. */
export const PTYWRIGHT_COMMON: ErrorRow[] = [
  {
    code: PwError.ParseError,
    name: "ParseError",
    meaning: "bad JSON, or an LSP header that cannot be parsed",
  },
  { code: PwError.InvalidRequest, name: "InvalidRequest", meaning: "bad envelope" },
  { code: PwError.MethodNotFound, name: "MethodNotFound", meaning: "no such method" },
  {
    code: PwError.InvalidParams,
    name: "InvalidParams",
    meaning: "bad params, an unknown session or adapter id",
  },
  { code: PwError.Internal, name: "Internal", meaning: "spawn, IO or plugin failures (a short message)" },
];

/** A family's error table: whose codes it uses, and its own rows besides that side's common ones. */
export interface ErrorTable {
  codes: "paneflow" | "ptywright";
  rows: ErrorRow[];
}

const paneflow = (...rows: ErrorRow[]): ErrorTable => ({ codes: "paneflow", rows });
const ptywright = (...rows: ErrorRow[]): ErrorTable => ({ codes: "ptywright", rows });

/** Error tables by family. */
export const errorTables: Record<string, ErrorTable> = {
  system: paneflow(),
  workspace: paneflow(
    targetRows(
      `data.reason "${ErrorReason.WorkspaceNotFound}" (no such index or id); "invalid_spec" (workspace.up, ` +
        "with data.issues)",
    ),
  ),
  surface: paneflow(
    targetRows(
      `data.reason "${ErrorReason.SurfaceNotFound}"; "${ErrorReason.Exited}" (writing to an exited pane); ` +
        `"dialog_open" (a submit while an agent shows a dialog)`,
    ),
    {
      code: ErrorCode.Backpressure,
      name: "Backpressure",
      meaning: `the pane's program stopped reading its input (data.reason "${ErrorReason.InputStalled}")`,
    },
    {
      code: -32001,
      name: "(surface.ask's timeout)",
      meaning:
        `surface.ask: no line with the marker in time (data.reason "${ErrorReason.Timeout}", data.last_seen)`,
    },
  ),
  fleet: paneflow(),
  ai: paneflow({
    code: ErrorCode.Permission,
    name: "Permission",
    meaning: "a hook frame without the pane's PANEFLOW_PANE_TOKEN (docs/security.md)",
  }),
  queue: paneflow({ code: ErrorCode.InternalError, name: "InternalError", meaning: "PaneIO is not running" }),
  notify: paneflow(
    {
      code: ErrorCode.InvalidParams,
      name: "InvalidParams",
      meaning: `notify.test: no such sink; notify.reply: a refused link (data.reason "link_refused": ` +
        `forged, expired or used) or a refused action (a stale dialog, like surface.answer)`,
    },
  ),
  events: paneflow({
    code: ErrorCode.InvalidRequest,
    name: "InvalidRequest",
    meaning: "the connection is already subscribed",
  }),
  server: ptywright(),
  session: ptywright(
    { code: PwError.Timeout, name: "Timeout", meaning: "session.wait: the matcher did not match in time" },
    {
      code: PwError.Closed,
      name: "Closed",
      meaning: "the session is closed, or its program exited and the matcher can no longer match",
    },
    { code: PwError.Cancelled, name: "Cancelled", meaning: "the wait was cancelled" },
  ),
  adapter: ptywright(
    { code: PwError.Timeout, name: "Timeout", meaning: "adapter.wait / adapter.turn: not done in time" },
    { code: PwError.Closed, name: "Closed", meaning: "the adapter's session closed or its program exited" },
    {
      code: PwError.PermissionDenied,
      name: "PermissionDenied",
      meaning: "a method the plugin's manifest does not permit (data.required_permission)",
    },
    { code: PwError.Cancelled, name: "Cancelled", meaning: "adapter.cancel_wait ended the wait" },
  ),
  plugin: ptywright({
    code: PwError.PermissionDenied,
    name: "PermissionDenied",
    meaning: "plugin.load / plugin.unload on a host started without --allow-plugin-load",
  }),
};
