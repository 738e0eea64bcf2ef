/**
 * One event bus, many sinks. Each subscriber has a bounded queue; a slow or
 * dead subscriber loses events (counted, then reported as one `dropped`
 * frame) and never slows the host or other subscribers. `surface_changed`
 * frames are coalesced per surface while they wait in a queue, so a flood of
 * output costs a bounded number of frames.
 *
 * @module
 */

/** An event as it goes on the wire. */
export interface BusEvent {
  type: string;
  surface_id?: number;
  [k: string]: unknown;
}

/** Which events a subscriber wants; empty means all. */
export interface Filter {
  surfaces?: Set<number>;
  types?: Set<string>;
}

/** Per-subscriber queue bound (SPEC §4). */
export const QUEUE_LIMIT = 1024;

/** One sink on the bus. Read it with {@link Subscription.next}. */
export class Subscription {
  #queue: BusEvent[] = [];
  #changed = new Map<number, BusEvent>();
  #dropped = 0;
  #wake: (() => void) | null = null;
  #closed = false;

  constructor(readonly filter: Filter, private readonly _bus: EventBus) {}

  /** Whether this subscriber wants `ev`. */
  wants(ev: BusEvent): boolean {
    const { surfaces, types } = this.filter;
    if (types && !types.has(ev.type)) return false;
    if (surfaces) {
      if (ev.surface_id === undefined || !surfaces.has(ev.surface_id)) return false;
    }
    return true;
  }

  /** Queues an event; never blocks. */
  push(ev: BusEvent): void {
    if (this.#closed) return;
    if (ev.type === "surface_changed" && ev.surface_id !== undefined) {
      const waiting = this.#changed.get(ev.surface_id);
      if (waiting) {
        Object.assign(waiting, ev);
        return;
      }
    }
    if (this.#queue.length >= QUEUE_LIMIT) {
      this.#dropped++;
      return;
    }
    const copy = { ...ev };
    if (ev.type === "surface_changed" && ev.surface_id !== undefined) {
      this.#changed.set(ev.surface_id, copy);
    }
    this.#queue.push(copy);
    this.#wake?.();
  }

  /**
   * The next event, a `dropped` marker if events were shed, or null once
   * closed. Waits at most `timeoutMs` (then returns undefined).
   */
  async next(timeoutMs?: number): Promise<BusEvent | null | undefined> {
    while (true) {
      if (this.#closed) return null;
      if (this.#dropped > 0 && this.#queue.length < QUEUE_LIMIT) {
        const count = this.#dropped;
        this.#dropped = 0;
        return { type: "dropped", count };
      }
      const ev = this.#queue.shift();
      if (ev) {
        if (ev.type === "surface_changed" && this.#changed.get(ev.surface_id!) === ev) {
          this.#changed.delete(ev.surface_id!);
        }
        return ev;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const woke = await new Promise<boolean>((resolve) => {
        this.#wake = () => resolve(true);
        if (timeoutMs !== undefined) timer = setTimeout(() => resolve(false), timeoutMs);
      });
      clearTimeout(timer);
      this.#wake = null;
      if (!woke) return undefined;
    }
  }

  /** Events waiting in the queue. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Unsubscribes; a pending {@link next} returns null. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this._bus.unsubscribe(this);
    this.#wake?.();
  }
}

/** The host's event bus. */
export class EventBus {
  #subs: Subscription[] = [];
  #taps: ((ev: BusEvent) => void)[] = [];

  /** Calls `fn` synchronously for every event: for in-host consumers such as the agent tracker. */
  tap(fn: (ev: BusEvent) => void): void {
    this.#taps.push(fn);
  }

  /** Adds a subscriber; it sees events published from now on. */
  subscribe(filter: Filter = {}): Subscription {
    const sub = new Subscription(filter, this);
    // Copy on write: a dispatch in progress keeps iterating the old array,
    // so a subscriber added during a dispatch does not see that event.
    this.#subs = [...this.#subs, sub];
    return sub;
  }

  /** Removes a subscriber. */
  unsubscribe(sub: Subscription): void {
    this.#subs = this.#subs.filter((s) => s !== sub);
  }

  /** Delivers an event to every subscriber that wants it. */
  publish(ev: BusEvent): void {
    const ts = ev.ts ?? Date.now();
    const full = { ...ev, ts };
    for (const fn of this.#taps) fn(full);
    for (const sub of this.#subs) {
      if (sub.wants(full)) sub.push(full);
    }
  }

  /** Number of subscribers. */
  get size(): number {
    return this.#subs.length;
  }
}
