/**
 * PaneIO's JSON-RPC methods and their params (merged into the protocol's
 * method table).
 *
 * @module
 */
import { z } from "zod";
import { patternProblem } from "./prompts.ts";

const SurfaceId = z.number().int().min(1).describe("Pane id (surface_id)");
/** Waits are bounded: a day at most. */
const TimeoutMs = z.number().int().min(1).max(86_400_000);

/** PaneIO's methods. */
export const paneioMethods = {
  "surface.ask": z.strictObject({
    surface_id: SurfaceId,
    text: z.string().describe("What to type (then Enter, unless submit is false)"),
    marker: z.string().min(1).max(1024).refine((m) => !m.includes("\n"), "a marker is one line")
      .describe("The reply ends at the first row holding this text after the echo of the text"),
    timeout_ms: TimeoutMs.optional().describe("Default 30000"),
    submit: z.boolean().optional().describe("Press Enter after the text (default true)"),
    fenced: z.boolean().optional()
      .describe("Fence the reply as untrusted output (default: ai_injection_fence)"),
  }),
  "surface.is_ready": z.strictObject({
    surface_id: SurfaceId,
    timeout_ms: TimeoutMs.optional().describe("Wait up to this long for the pane to become ready"),
  }),
  "surface.clear": z.strictObject({ surface_id: SurfaceId }),
  "queue.info": z.strictObject({}),
} as const;

/** Methods that type into panes: the same gate as `surface.send_text`. */
export const paneioGated = { "surface.ask": "send" } as const;

/** The config section `paneio`. */
export const PaneioConfig = z.strictObject({
  prompt_patterns: z.array(
    z.string().min(1).superRefine((p, ctx) => {
      const problem = patternProblem(p);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
  ).default([]).describe("Extra prompt regexes (matched at a line's start) for ask and readiness"),
}).prefault({});

/** The config section `queue`. */
export const QueueConfig = z.strictObject({
  root: z.string().min(1).optional().describe(
    "Queue root (holds queue/ and status/agents/); serve --queue wins",
  ),
  grace_secs: z.number().min(0).max(86_400).default(30)
    .describe("How long a message may wait for its recipient's pane to exist"),
  timeout_secs: z.number().positive().max(604_800).default(3600)
    .describe("How long a delivered message may take before it fails with reason timeout"),
}).prefault({});
