/**
 * Agent hook methods (`ai-hook` frames from inside panes): each feeds the tracker and answers the pane's status.
 *
 * @module
 */
import type { HostContext } from "../context.ts";
import type { HookFrame } from "../../agents/tracker.ts";
import type { FamilyHandlers } from "./_types.ts";
import { acceptHookFrame } from "../../core/isolation/hook_token.ts";

function hook(ctx: HostContext, method: string, frame: HookFrame) {
  const s = ctx.registry.surface(frame.surface_id);
  ctx.agents.hook(method, acceptHookFrame(s, method, frame));
  const status = ctx.agents.status(s);
  if (frame.transcript_path) {
    void ctx.usage.observe(s, status.tool ?? frame.tool ?? "claude", frame.transcript_path);
  }
  return status;
}

/** The `ai.*` handlers. */
export const ai: FamilyHandlers<"ai"> = {
  "ai.session_start": (ctx, p) => hook(ctx, "ai.session_start", p),
  "ai.prompt_submit": (ctx, p) => hook(ctx, "ai.prompt_submit", p),
  "ai.tool_use": (ctx, p) => hook(ctx, "ai.tool_use", p),
  "ai.notification": (ctx, p) => hook(ctx, "ai.notification", p),
  "ai.stop": (ctx, p) => hook(ctx, "ai.stop", p),
  "ai.exit": (ctx, p) => hook(ctx, "ai.exit", p),
  "ai.session_end": (ctx, p) => hook(ctx, "ai.session_end", p),
};
