/**
 * Large-prompt files: a prompt too big to paste is written to
 * `<dir>/surface-N-<time>.md` (the directory the host gives: `prompts/`
 * beside its socket) and submitted by reference. Every file is tracked by
 * its pane and deleted when the pane closes and when the host stops, so
 * none outlives either, whichever path wrote it.
 *
 * @module
 */

/** Files by surface id, in one directory. */
export class PromptFiles {
  #bySurface = new Map<number, Set<string>>();
  #seq = 0;

  /** `dir` is created (0700) at the first write. */
  constructor(readonly dir: string) {}

  /** Writes `text` (0600) to a new file of pane `id`'s and returns its path. */
  async write(id: number, text: string): Promise<string> {
    await Deno.mkdir(this.dir, { recursive: true, mode: 0o700 });
    // The sequence keeps two prompts of the same millisecond apart.
    const path = `${this.dir}/surface-${id}-${Date.now()}-${++this.#seq}.md`;
    await Deno.writeTextFile(path, text, { mode: 0o600 });
    this.add(id, path);
    return path;
  }

  /** Records `path` as belonging to pane `id`. */
  add(id: number, path: string): void {
    let set = this.#bySurface.get(id);
    if (!set) this.#bySurface.set(id, set = new Set());
    set.add(path);
  }

  /** Deletes pane `id`'s files. */
  async closed(id: number): Promise<void> {
    const set = this.#bySurface.get(id);
    this.#bySurface.delete(id);
    for (const path of set ?? []) await Deno.remove(path).catch(() => {});
  }

  /** Deletes every file (the host is stopping). */
  async clear(): Promise<void> {
    for (const id of [...this.#bySurface.keys()]) await this.closed(id);
  }
}
