/**
 * The terminal engines a pane can parse its output with (docs/engines.md):
 * constants only, so the protocol's schemas (and the light CLI that loads
 * them) take no more than this from the config's module.
 *
 * @module
 */

/** The engines' names. */
export const ENGINE_KINDS = ["xterm", "ghostty"] as const;
/** A terminal engine's name. */
export type EngineKind = typeof ENGINE_KINDS[number];

/**
 * The engine a pane gets when neither the config nor the pane names one:
 * xterm, or `PANEFLOW_ENGINE` (how the tests run on the other engine).
 */
export function defaultEngine(): EngineKind {
  let env: string | undefined;
  try {
    env = Deno.env.get("PANEFLOW_ENGINE");
  } catch { /* no env permission: the default */ }
  return (ENGINE_KINDS as readonly string[]).includes(env ?? "") ? env as EngineKind : "xterm";
}
