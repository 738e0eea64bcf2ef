/**
 * Error codes, exit codes and protocol constants shared by the host and the
 * CLI. No dependencies: the CLI path imports this.
 *
 * @module
 */

/** JSON-RPC error codes used on the wire (docs/protocol.md, Error codes). */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  Backpressure: -32000,
  Permission: -32001,
} as const;

/** CLI exit codes (docs/cli.md, Selectors and exit codes). */
export const ExitCode = {
  Ok: 0,
  Failure: 1,
  Usage: 2,
  NotFound: 3,
  Timeout: 4,
} as const;

/** Protocol version reported by `system.identify`. */
export const PROTOCOL_VERSION = 1;

/** Product version. */
export const VERSION = "0.1.0";

/** Largest single `surface.send_text` payload, in bytes of UTF-8. */
export const MAX_SEND_BYTES = 64 * 1024;

/** Largest request line the host accepts, in bytes. */
export const MAX_LINE_BYTES = 1024 * 1024;

/** Concurrent connections the host serves. */
export const MAX_CONNECTIONS = 16;

/** Values `error.data.reason` takes, so clients can pick an exit code. */
export const ErrorReason = {
  SurfaceNotFound: "surface_not_found",
  WorkspaceNotFound: "workspace_not_found",
  Gated: "gated",
  Exited: "exited",
  Timeout: "timeout",
  /** The pane's program stopped reading its input part way through a write. */
  InputStalled: "input_stalled",
  /** `surface.answer`: the pane shows no dialog paneflow knows how to answer. */
  NoDialog: "no_dialog",
  /** `surface.answer`: the dialog on screen is not the one the caller's dialog_id names. */
  StaleDialog: "stale_dialog",
  /** `surface.answer`: the answer names none of the dialog's options. */
  UnknownOption: "unknown_option",
} as const;
