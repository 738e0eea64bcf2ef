/**
 * A small seeded PRNG (mulberry32) for property tests and benchmark inputs:
 * the same seed gives the same sequence, so a failure can be replayed and
 * every bench run writes the same bytes.
 *
 * @module
 */

/** Returns a generator of floats in [0, 1) for `seed`. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
