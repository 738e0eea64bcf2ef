/**
 * Large-prompt files (`prompts/surface-N-*.md` next to the socket, written
 * when a prompt is too big to paste): tracked per pane, deleted when the
 * pane closes and when the host stops, so they do not outlive either.
 *
 * @module
 */

/** Files by surface id. */
export class PromptFiles {
  #bySurface = new Map<number, Set<string>>();

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

/** The host's table (one host per process). */
export const promptFiles = new PromptFiles();
