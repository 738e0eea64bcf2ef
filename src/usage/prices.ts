/**
 * Model prices as data: US dollars per million tokens, by kind, for the
 * models Claude Code, Codex, Gemini CLI and opencode use by default. A name
 * matches the longest prefix in the table (`claude-sonnet-4-5-20250929` →
 * `claude-sonnet-4-5`); the config's `usage.prices` entries come first.
 * Sources: https://docs.anthropic.com/en/docs/about-claude/pricing,
 * https://platform.openai.com/docs/pricing, https://ai.google.dev/gemini-api/docs/pricing.
 *
 * @module
 */

/** Prices per million tokens. */
export interface Price {
  input: number;
  output: number;
  /** Default: input. */
  cache_read?: number;
  /** Default: input. */
  cache_write?: number;
}

/** The shipped table (model name prefix → price). */
export const PRICES: Readonly<Record<string, Price>> = {
  // Anthropic: cache writes (5-minute) at 1.25 x input, cache reads at 0.1 x input.
  "claude-opus-4-5": { input: 5, output: 25, cache_write: 6.25, cache_read: 0.5 },
  "claude-opus-4": { input: 15, output: 75, cache_write: 18.75, cache_read: 1.5 },
  "claude-sonnet-4": { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3 },
  "claude-3-7-sonnet": { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3 },
  "claude-3-5-sonnet": { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3 },
  "claude-haiku-4-5": { input: 1, output: 5, cache_write: 1.25, cache_read: 0.1 },
  "claude-3-5-haiku": { input: 0.8, output: 4, cache_write: 1, cache_read: 0.08 },
  // OpenAI: cached input is the only cache kind (no write price).
  "gpt-5-codex": { input: 1.25, output: 10, cache_read: 0.125 },
  "gpt-5-mini": { input: 0.25, output: 2, cache_read: 0.025 },
  "gpt-5-nano": { input: 0.05, output: 0.4, cache_read: 0.005 },
  "gpt-5": { input: 1.25, output: 10, cache_read: 0.125 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6, cache_read: 0.1 },
  "gpt-4.1": { input: 2, output: 8, cache_read: 0.5 },
  "o4-mini": { input: 1.1, output: 4.4, cache_read: 0.275 },
  "o3": { input: 2, output: 8, cache_read: 0.5 },
  // Google (prompts up to 200k tokens).
  "gemini-2.5-pro": { input: 1.25, output: 10, cache_read: 0.31 },
  "gemini-2.5-flash-lite": { input: 0.1, output: 0.4, cache_read: 0.025 },
  "gemini-2.5-flash": { input: 0.3, output: 2.5, cache_read: 0.075 },
};

/** Token counts by kind (`input` excludes cached reads and writes). */
export interface Tokens {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

/** The price of `model`: the longest matching prefix of `overrides`, then of the shipped table. */
export function priceOf(model: string, overrides: Readonly<Record<string, Price>> = NONE): Price | null {
  let known = memo.get(overrides);
  if (!known) memo.set(overrides, known = new Map());
  let p = known.get(model);
  if (p === undefined) known.set(model, p = lookup(model, overrides));
  return p;
}

const NONE: Readonly<Record<string, Price>> = {};
/** Looked-up prices by override table, then model name (the ledger asks once per message). */
const memo = new WeakMap<Readonly<Record<string, Price>>, Map<string, Price | null>>();

function lookup(model: string, overrides: Readonly<Record<string, Price>>): Price | null {
  const name = model.replace(/^(?:anthropic|openai|google)\//, "");
  for (const table of [overrides, PRICES]) {
    let best: string | null = null;
    for (const prefix of Object.keys(table)) {
      if (name.startsWith(prefix) && (best === null || prefix.length > best.length)) best = prefix;
    }
    if (best !== null) return table[best];
  }
  return null;
}

/** What `tokens` of `model` cost in US dollars, or null when the model has no price. */
export function costOf(
  model: string,
  tokens: Tokens,
  overrides?: Readonly<Record<string, Price>>,
): number | null {
  const p = priceOf(model, overrides);
  if (!p) return null;
  return (tokens.input * p.input + tokens.output * p.output +
    tokens.cache_read * (p.cache_read ?? p.input) + tokens.cache_write * (p.cache_write ?? p.input)) / 1e6;
}
