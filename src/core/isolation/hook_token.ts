/**
 * Hook frames belong to their pane. Every pane gets a random token in its
 * environment (`PANEFLOW_PANE_TOKEN`); `paneflow ai-hook`, run by the agent
 * inside that pane, sends it with each `ai.*` frame, and the host accepts a
 * frame for a surface only with that surface's token. A program in another
 * pane, or any other client of the socket, does not know it: a forged
 * `ai.prompt_submit` or `ai.stop` is refused and counted (`explain`).
 *
 * @module
 */
import { RpcError } from "../../errors.ts";
import { ErrorCode } from "../../spec/codes.ts";

/** The pane environment variable that carries the token. */
export const PANE_TOKEN_ENV = "PANEFLOW_PANE_TOKEN";

/** The `reason` of a refused frame. */
export const HOOK_TOKEN_REASON = "hook_token";

/** A fresh pane token: 128 random bits, hex. */
export function newPaneToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const refused = new WeakMap<object, number>();

/** Compares without an early exit on the first differing character. */
function same(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The frame without its token when it carries the surface's token; else
 * counts the refusal and throws one clear error.
 */
export function acceptHookFrame<F extends { token?: string }>(
  surface: { id: number; token: string },
  method: string,
  frame: F,
): Omit<F, "token"> {
  const { token, ...rest } = frame;
  if (token !== undefined && same(token, surface.token)) return rest;
  refused.set(surface, (refused.get(surface) ?? 0) + 1);
  throw new RpcError(
    ErrorCode.Permission,
    `${method} refused: ${token === undefined ? "the frame carries no" : "the frame carries the wrong"} ` +
      `pane token for surface ${surface.id}; only \`paneflow ai-hook\` run inside that pane ` +
      `(with its ${PANE_TOKEN_ENV}) may post its hook frames`,
    { reason: HOOK_TOKEN_REASON },
  );
}

/** How many hook frames for this surface were refused. */
export function refusedHookFrames(surface: object): number {
  return refused.get(surface) ?? 0;
}
