/**
 * Selectors in a capability scope: a pane name, a glob over names (`*` any
 * run, `?` one character), or a pane id.
 *
 * @module
 */

/** A glob over pane names: `*` any run, `?` one character. */
function globMatch(glob: string, name: string): boolean {
  const re = new RegExp(
    `^${glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`,
    "u",
  );
  return re.test(name);
}

/** Whether a selector names this pane (a name glob or its id). */
export function selects(selector: string, s: { id: number; name: string | null }): boolean {
  if (/^\d+$/.test(selector)) return Number(selector) === s.id;
  return s.name !== null && globMatch(selector, s.name);
}
