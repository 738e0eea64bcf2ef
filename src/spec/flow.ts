/**
 * The flow spec of `paneflow flow run` (docs/flows.md): a TOML DAG of
 * steps. The schema, its limits and the plan's types; checking and planning
 * live in src/flow/check.ts.
 *
 * @module
 */
import { z } from "zod";
import { Layout, PaneSpec, type WorkspaceSpec } from "./workspace.ts";

/** Largest number of panes one flow may spawn. */
export const PANE_BUDGET = 32;
/** Substituted text longer than this is cut with {@link TRUNCATED}. */
export const MAX_TEXT_BYTES = 64 * 1024;
/** The marker that ends truncated text. */
export const TRUNCATED = "…[truncated]";

export const OnFailure = z.enum(["fail_fast", "continue"]);

/** One `[[step]]` table. */
export const Step = z.strictObject({
  id: z.string().min(1),
  /** A host of the config's `hosts` (`local`: this machine, as when omitted). */
  host: z.string().min(1).optional(),
  needs: z.array(z.string().min(1)).optional(),
  foreach: z.array(z.union([z.string().min(1), z.number()])).min(1).optional(),
  pane: PaneSpec.optional(),
  send: z.strictObject({
    target: z.string().min(1),
    text: z.string(),
    submit: z.boolean().optional(),
  }).optional(),
  ready: z.strictObject({
    pattern: z.string().min(1),
    timeout_secs: z.number().positive().optional(),
  }).optional(),
  capture: z.strictObject({
    var: z.string().regex(
      /^[A-Za-z_][A-Za-z0-9_]*$/,
      "must be a name of letters, digits and _ that does not start with a digit",
    ),
    lines: z.number().int().min(1).max(500),
  }).optional(),
  submit: z.boolean().optional(),
  message: z.strictObject({
    to: z.string().min(1),
    content: z.string(),
    from: z.string().min(1).optional(),
    type: z.enum(["task", "info", "result", "error"]).optional(),
    timeout_secs: z.number().positive().optional(),
    var: z.string().regex(
      /^[A-Za-z_][A-Za-z0-9_]*$/,
      "must be a name of letters, digits and _ that does not start with a digit",
    ).optional(),
  }).optional(),
});

export type Step = z.infer<typeof Step>;

/** The flow file's schema. */
export const FlowSpec = z.strictObject({
  name: z.string().min(1).optional(),
  layout: Layout.optional(),
  defaults: z.strictObject({
    timeout_secs: z.number().positive().optional(),
    on_failure: OnFailure.optional(),
  }).optional(),
  step: z.array(Step).min(1),
});

/** A flow file after the schema check. */
export type FlowSpec = z.infer<typeof FlowSpec>;

/** One runnable instance of a step. */
export interface StepInstance {
  /** `impl`, or `check[api]` for a foreach instance. */
  key: string;
  id: string;
  /** Index of the `[[step]]` table. */
  index: number;
  /** The named host its pane lives on (`up` there); null for this machine. */
  host: string | null;
  item: string | null;
  /** Keys of the instances this one waits for. */
  needs: string[];
  /** A pane to spawn (`${item}` substituted; the prompt may still hold `${var}`). */
  pane: WorkspaceSpec["panes"][number] | null;
  /** Submit the pane's prompt once the program is ready. */
  submit: boolean;
  send: { target: string; text: string; submit: boolean } | null;
  ready: { pattern: string; timeout_secs: number } | null;
  capture: { var: string; lines: number } | null;
  /**
   * A message to put on the host's queue (docs/paneio.md) and wait for: its
   * result goes into `var` when given.
   */
  message?: {
    to: string;
    content: string;
    from: string;
    type: "task" | "info" | "result" | "error";
    timeout_secs: number;
    var: string | null;
  } | null;
}

/** A validated flow. */
export interface FlowPlan {
  name: string;
  layout: "even_h" | "even_v" | "main_vertical" | "tiled";
  onFailure: "fail_fast" | "continue";
  /** Instances in a topological order. */
  steps: StepInstance[];
  /** Whether anything submits (needs the scripting gate). */
  submits: boolean;
  /** The named hosts the flow uses, in file order (not this machine's). */
  hosts: string[];
  /** Capture vars: `foreach` ones map item → value. */
  captures: Record<string, { step: string; foreach: boolean }>;
}
