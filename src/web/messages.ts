/**
 * What crosses the web view's wire besides screens: the messages a tab may
 * send (validated with zod), the host events the view follows, and the
 * headers every HTTP answer carries.
 *
 * @module
 */
import { z } from "zod";

/** Host events the view follows. */
export const EVENT_TYPES = [
  "agent_state",
  "surface_created",
  "surface_renamed",
  "surface_exited",
  "surface_closed",
  "workspace_created",
  "workspace_closed",
];

/** A message from a tab. */
export const ClientMessage = z.discriminatedUnion("t", [
  z.strictObject({ t: z.literal("focus"), id: z.number().int().min(1).nullable() }),
  // The panes this tab shows (its tiles in view, its focused pane); a hidden tab sends none.
  z.strictObject({ t: z.literal("view"), ids: z.array(z.number().int().min(1)).max(4096) }),
  z.strictObject({
    t: z.literal("input"),
    id: z.number().int().min(1),
    data: z.string().min(1).max(64 * 1024),
  }),
  // A fleet card's Approve / Deny: surface.answer, guarded by the dialog id the card showed.
  z.strictObject({
    t: z.literal("answer"),
    id: z.number().int().min(1),
    answer: z.enum(["approve", "deny"]),
    dialog_id: z.string().regex(/^[0-9a-f]{8}$/),
  }),
  z.strictObject({
    t: z.literal("paste"),
    id: z.number().int().min(1),
    text: z.string().min(1).max(64 * 1024),
  }),
]);

/** Headers on every HTTP answer: no caching, no sniffing, no framing, no referrer. */
export const SECURITY_HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/** A plain-text answer. */
export function text(status: number, body: string, extra: Record<string, string> = {}): Response {
  return new Response(body, {
    status,
    headers: { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8", ...extra },
  });
}
