/**
 * A result already serialized (a session snapshot is ~2,000 cells: the pane
 * worker writes its JSON once, and it crosses to the main thread and onto
 * the wire as one string instead of being cloned and serialized again).
 *
 * @module
 */

/** JSON text to embed verbatim as a response's `result`. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** Serializes a message; a `result` that is {@link RawJson} is spliced in as is. */
export function stringifyMessage(value: unknown): string {
  const v = value as { result?: unknown } | null;
  if (v && typeof v === "object" && v.result instanceof RawJson) {
    const { result, ...rest } = v as { result: RawJson };
    const head = JSON.stringify(rest);
    return `${head.slice(0, -1)}${head.length > 2 ? "," : ""}"result":${result.text}}`;
  }
  return JSON.stringify(value);
}
