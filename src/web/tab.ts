/**
 * One open tab of `paneflow web` (./server.ts): what it shows, and the
 * frames waiting for it, paced by its share of the tile budget and held to
 * the newest per pane while it reads slowly.
 *
 * @module
 */

/**
 * Cells of tile screens sent per second at most, to all tabs together,
 * shared evenly by the tabs that show something (a hidden tab, or one with
 * no tile in view, takes no share). Drawing a tile costs the browser far
 * more than it costs the host (Chromium: ~3-5 µs of CPU per cell drawn,
 * bench/web.ts), and browsers often run on the host's machine: this bounds
 * what all open tabs together draw. One tab gets it all (twenty 66×11
 * tiles in view: each ~4 times a second; fewer tiles: every frame, 10 a
 * second); ten tabs in view at once each get a tenth. A tab's focused pane
 * is not counted: it gets every frame.
 */
export const TILE_CELLS_PER_SECOND = 60_000;
/** A page is sent tile screens at most this often (a focused pane's screens go at once). */
export const PAGE_SCREENS_MS = 100;
/** A tab whose socket holds more than this many unsent bytes gets nothing more until it drains. */
export const SEND_HIGH_WATER = 512 * 1024;

/** A message waiting for a tab: its text and, for a tile's screen, its cells (what it costs to draw). */
interface Pending {
  msg: string;
  cells: number;
}

/** One open tab. */
export class Tab {
  focus: number | null = null;
  /** The panes the tab shows (tiles in view, its focused pane); null: all (it never said). */
  view: Set<number> | null = null;
  /** Tile cells a second this tab may be sent (its share of {@link TILE_CELLS_PER_SECOND}). */
  share = TILE_CELLS_PER_SECOND;
  /** Input messages sent to the host and not answered yet. */
  inputInFlight = 0;
  /** The newest message of each kind not yet sent (a pane's frame replaces its older one). */
  #pending = new Map<string, Pending>();
  #timer: ReturnType<typeof setTimeout> | null = null;
  #budgetTimer: ReturnType<typeof setTimeout> | null = null;
  /** Tile cells that may be sent now; refills at {@link share} a second, up to half a second's worth. */
  #cells = 0;
  #cellsAt = performance.now();
  /** When a page may next be sent tile screens (they go together, at most every {@link PAGE_SCREENS_MS}). */
  #screensAt = 0;
  /** Frames replaced unsent since the tab fell behind; null while it keeps up. */
  #skipped: number | null = null;
  constructor(readonly ws: WebSocket, private readonly _log: (line: string) => void) {}

  /** Whether the tab shows this pane's screen. */
  wants(id: number): boolean {
    return this.view === null || this.view.has(id) || this.focus === id;
  }

  /** Whether this is a page that draws something (a hidden page, or one with no tile in view, does not). */
  get drawing(): boolean {
    return this.view !== null && (this.view.size > 0 || this.focus !== null);
  }

  /** Forgets a message not sent yet. */
  unqueue(key: string): void {
    this.#pending.delete(key);
  }

  /** Queues a message; a tile's screen says its cells, and waits for the tab's budget. */
  queue(key: string, msg: string, cells = 0): void {
    if (this.#pending.delete(key) && this.#skipped !== null) this.#skipped++;
    this.#pending.set(key, { msg, cells });
    this.flush();
  }

  flush(): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    const now = performance.now();
    const cap = this.share / 2;
    this.#cells = Math.min(cap, this.#cells + ((now - this.#cellsAt) / 1000) * this.share);
    this.#cellsAt = now;
    let waitMs = 0; // -1: waiting for the socket to drain
    // A page (a tab that says what it shows) takes its tile screens together, as one message,
    // once its budget covers all of them (or is full), at most every PAGE_SCREENS_MS: one
    // redraw of several tiles costs a browser much less than as many redraws of one tile.
    const batch: string[] = [];
    const paced = this.view !== null;
    const screensNow = !paced || this.#screensIn(now, cap) === 0;
    for (const [key, { msg, cells }] of this.#pending) {
      if (this.ws.bufferedAmount > SEND_HIGH_WATER) {
        // A slow tab: wait for it to drain; by then newer frames have replaced the waiting ones.
        if (this.#skipped === null) {
          this.#skipped = 0;
          this._log("paneflow web: a tab reads slowly; it gets only the newest screens until it catches up");
        }
        this.#timer ??= setTimeout(() => {
          this.#timer = null;
          this.flush();
        }, 50);
        waitMs = -1;
        break;
      }
      // Only a page (it says what it shows) is paced; another client gets every frame.
      if (cells > 0 && paced) {
        // The oldest first; the last one may take the budget below zero (by one screen at most).
        if (!screensNow || this.#cells <= 0) continue;
        this.#cells -= cells;
      }
      this.#pending.delete(key);
      if (cells > 0 && paced) {
        batch.push(msg);
        continue;
      }
      if (!this.#send(msg)) return;
    }
    if (batch.length) this.#screensAt = now + PAGE_SCREENS_MS;
    if (paced && waitMs === 0) waitMs = this.#screensIn(now, cap);
    if (batch.length === 1) this.#send(batch[0]);
    else if (batch.length) this.#send(`{"t":"batch","list":[${batch.join(",")}]}`);
    if (waitMs !== -1 && waitMs !== Infinity) {
      this.#budgetTimer ??= setTimeout(() => {
        this.#budgetTimer = null;
        this.flush();
      }, Math.max(1, Math.ceil(waitMs)));
    }
    if (this.#skipped !== null && this.ws.bufferedAmount <= SEND_HIGH_WATER) {
      this._log(`paneflow web: the slow tab caught up; ${this.#skipped} older frames were skipped`);
      this.#skipped = null;
    }
  }

  /** Milliseconds until a page's waiting tile screens may go (0: now; Infinity: none wait). */
  #screensIn(now: number, cap: number): number {
    let total = 0;
    for (const p of this.#pending.values()) total += p.cells;
    if (total === 0) return Infinity;
    const need = Math.min(total, cap);
    return Math.max(0, this.#screensAt - now, ((need - this.#cells) / this.share) * 1000);
  }

  #send(msg: string): boolean {
    try {
      this.ws.send(msg);
      return true;
    } catch {
      return false;
    }
  }

  dispose(): void {
    for (const t of [this.#timer, this.#budgetTimer]) if (t !== null) clearTimeout(t);
    this.#timer = this.#budgetTimer = null;
    this.#pending.clear();
    if (this.#skipped !== null) {
      this._log(`paneflow web: a slow tab closed; ${this.#skipped} frames were skipped`);
    }
  }
}
