/**
 * Claude Code (and compatible) lifecycle hooks → paneflow `ai.*` frames.
 * Pure mapping; the `ai-hook` verb does the I/O. Light: no npm imports.
 *
 * @module
 */

/** The `ai.*` methods a hook can post. */
export type AiMethod =
  | "ai.session_start"
  | "ai.prompt_submit"
  | "ai.tool_use"
  | "ai.notification"
  | "ai.stop"
  | "ai.exit"
  | "ai.session_end";

/** Hook event names (Claude Code's, and ours in snake case) → the frame they post. */
const EVENTS = new Map<string, AiMethod>(Object.entries({
  SessionStart: "ai.session_start",
  UserPromptSubmit: "ai.prompt_submit",
  PreToolUse: "ai.tool_use",
  PostToolUse: "ai.tool_use",
  PostToolUseFailure: "ai.tool_use",
  PermissionRequest: "ai.notification",
  Notification: "ai.notification",
  Stop: "ai.stop",
  StopFailure: "ai.stop",
  SubagentStop: "ai.tool_use",
  SessionEnd: "ai.session_end",
  session_start: "ai.session_start",
  prompt_submit: "ai.prompt_submit",
  tool_use: "ai.tool_use",
  notification: "ai.notification",
  stop: "ai.stop",
  exit: "ai.exit",
  session_end: "ai.session_end",
  // Codex's `notify` program gets one JSON argument per event.
  "codex-notify": "ai.stop",
  // Gemini CLI's settings hooks.
  BeforeAgent: "ai.prompt_submit",
  AfterAgent: "ai.stop",
  BeforeTool: "ai.tool_use",
  AfterTool: "ai.tool_use",
}));

/** The prompt of Codex's title side-thread, whose `notify` is not the user's turn. */
const CODEX_TITLE_PROMPT = /^Generate a concise, single-line task title/;

/** Gemini CLI's AfterAgent `prompt_response` when the turn produced no text (e.g. an API error). */
export const GEMINI_NO_RESPONSE = "[no response text]";

/** Notification types that mean the agent waits for the user. */
export const WAITING_NOTIFICATIONS = new Set(["permission_prompt", "elicitation_dialog"]);

/** Params of an `ai.*` frame (validated again by the host). */
export interface AiFrame {
  surface_id: number;
  tool: string;
  event: string;
  pid?: number;
  session_id?: string;
  prompt?: string;
  tool_name?: string;
  phase?: "pre" | "post";
  message?: string;
  notification_type?: string;
  last_result?: string;
  error_type?: string;
  exit_code?: number;
  /** The pane's PANEFLOW_PANE_TOKEN: the host accepts the frame only with it. */
  token?: string;
  /** The agent's own log, which the usage ledger reads. */
  transcript_path?: string;
}

const MAX_FIELD = 8 * 1024;

function str(v: unknown): string | undefined {
  if (typeof v !== "string") return undefined;
  return v.length > MAX_FIELD ? v.slice(0, MAX_FIELD) + "…[truncated]" : v;
}

/** A one-line description of a tool call, e.g. `Bash: rm -rf build`. */
export function describeToolCall(toolName: unknown, input: unknown): string | undefined {
  const name = str(toolName);
  if (!name) return undefined;
  if (input && typeof input === "object") {
    const i = input as Record<string, unknown>;
    const detail = str(i.command) ?? str(i.file_path) ?? str(i.path) ?? str(i.url) ?? str(i.pattern);
    if (detail) return `${name}: ${detail.split("\n")[0]}`;
  }
  return name;
}

/** The method a hook event posts, or null for events we do not track. */
export function methodFor(event: string): AiMethod | null {
  return EVENTS.get(event) ?? null; // a Map: "constructor" is not an event
}

/** Builds the frame for a hook event from its stdin payload (any JSON; garbage is `{}`). */
export function hookFrame(
  event: string,
  payload: unknown,
  ctx: { surfaceId: number; tool?: string; pid?: number; token?: string },
): { method: AiMethod; params: AiFrame } | null {
  const method = methodFor(event);
  if (!method) return null;
  const p = (payload && typeof payload === "object" ? payload : {}) as Record<string, unknown>;
  if (ctx.tool === "qwen") return qwenFrame(event, p, ctx);
  return baseFrame(event, p, ctx);
}

/**
 * Qwen Code's hooks are Claude Code's, with two differences: after an
 * approved tool ran it fires UserPromptSubmit again with an empty prompt
 * (the same turn going on, not a new one), and its `permission_prompt`
 * Notification names only the tool ("Qwen Code needs your permission to use
 * run_shell_command"), so the PermissionRequest's message, with the
 * command, is kept.
 */
function qwenFrame(
  event: string,
  p: Record<string, unknown>,
  ctx: { surfaceId: number; tool?: string; pid?: number; token?: string },
): { method: AiMethod; params: AiFrame } | null {
  if (event === "UserPromptSubmit" && p.prompt === "") {
    const params: AiFrame = { surface_id: ctx.surfaceId, tool: "qwen", event, phase: "post" };
    if (ctx.pid) params.pid = ctx.pid;
    if (ctx.token) params.token = ctx.token;
    const session = str(p.session_id);
    if (session) params.session_id = session;
    return { method: "ai.tool_use", params };
  }
  const frame = baseFrame(event, p, ctx);
  if (frame && event === "Notification" && p.notification_type === "permission_prompt") {
    delete frame.params.message;
  }
  return frame;
}

function baseFrame(
  event: string,
  p: Record<string, unknown>,
  ctx: { surfaceId: number; tool?: string; pid?: number; token?: string },
): { method: AiMethod; params: AiFrame } | null {
  const method = methodFor(event);
  if (!method) return null;
  if (event === "codex-notify") {
    if (p.type !== "agent-turn-complete") return null;
    const inputs = Array.isArray(p["input-messages"]) ? p["input-messages"] : [];
    // Codex's TUI names each thread in a side turn that fires notify too, with its own thread id.
    if (inputs.length && inputs.every((m) => typeof m === "string" && CODEX_TITLE_PROMPT.test(m))) {
      return null;
    }
  }
  const params: AiFrame = {
    surface_id: ctx.surfaceId,
    tool: ctx.tool ?? "claude",
    event,
  };
  if (ctx.pid) params.pid = ctx.pid;
  if (ctx.token) params.token = ctx.token;
  const session = str(p.session_id) ?? str(p["thread-id"]);
  if (session) params.session_id = session;
  const transcript = str(p.transcript_path);
  if (transcript) params.transcript_path = transcript;
  switch (event) {
    case "UserPromptSubmit":
    case "BeforeAgent":
      params.prompt = str(p.prompt);
      break;
    case "PreToolUse":
    case "PostToolUse":
    case "PostToolUseFailure":
    case "BeforeTool":
    case "AfterTool":
      params.tool_name = str(p.tool_name);
      params.phase = event === "PreToolUse" || event === "BeforeTool" ? "pre" : "post";
      break;
    case "PermissionRequest":
      params.notification_type = "permission_prompt";
      params.tool_name = str(p.tool_name);
      params.message = describeToolCall(p.tool_name, p.tool_input) ?? str(p.message);
      break;
    case "Notification":
      if (p.notification_type === "ToolPermission") {
        // Gemini CLI: a tool confirmation dialog opened.
        const d = (p.details && typeof p.details === "object" ? p.details : {}) as Record<string, unknown>;
        params.notification_type = "permission_prompt";
        const subject = str(d.command) ?? str(d.fileName) ?? str(d.url) ?? str(d.prompt);
        params.message = subject ? `${str(d.title) ?? "Confirm"}: ${subject.split("\n")[0]}` : str(p.message);
        break;
      }
      params.notification_type = str(p.notification_type) ?? "notification";
      params.message = str(p.message);
      break;
    case "AfterAgent":
      // Gemini CLI: garbled when the reply streamed in several chunks (ai-hook prefers the transcript).
      if (p.prompt_response !== GEMINI_NO_RESPONSE) params.last_result = str(p.prompt_response);
      break;
    case "Stop":
      params.last_result = str(p.last_assistant_message);
      break;
    case "codex-notify":
      params.last_result = str(p["last-assistant-message"]);
      break;
    case "StopFailure":
      params.error_type = str(p.error_type) ?? str(p.error) ?? "unknown_error";
      // Claude Code 2.1 sends `error` (e.g. "server_error") and the API error text
      // it shows as `last_assistant_message` ("API Error: 500 Internal server error. ...").
      params.message = str(p.error_message) ?? str(p.error_details) ?? str(p.message) ??
        str(p.last_assistant_message);
      break;
  }
  for (const k of Object.keys(params) as (keyof AiFrame)[]) {
    if (params[k] === undefined) delete params[k];
  }
  return { method, params };
}

/** The text of the last assistant message in a Claude Code transcript (JSONL). */
export function lastAssistantText(jsonl: string): string | undefined {
  const lines = jsonl.trimEnd().split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(lines[i]);
    } catch {
      continue;
    }
    // A line of `null`, a number or a list is not an entry (the parser fuzz found `null`).
    if (!entry || typeof entry !== "object") continue;
    // Gemini CLI's chat log: `{"type":"gemini","content":"<reply text>"}`; a user entry ends the search.
    if (entry.type === "gemini" && typeof entry.content === "string" && entry.content) {
      return str(entry.content);
    }
    if (entry.type === "user" && typeof entry.id === "string" && !("message" in entry)) return undefined;
    const msg = entry.message as { role?: string; content?: unknown } | undefined;
    if (entry.type !== "assistant" || !msg || typeof msg !== "object") continue;
    const content = msg.content;
    if (typeof content === "string") return str(content);
    if (Array.isArray(content)) {
      const text = content
        .filter((c) => c && typeof c === "object" && (c as { type?: string }).type === "text")
        .map((c) => String((c as { text: unknown }).text ?? ""))
        .join("\n");
      if (text) return str(text);
    }
  }
  return undefined;
}
