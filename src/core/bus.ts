/**
 * One event bus, many sinks. Each subscriber has a bounded queue; a slow or
 * dead subscriber loses the events that find its queue full (counted in one
 * `dropped` frame that takes their place in the stream, after everything
 * queued before them) and never slows the host or other subscribers.
 * `surface_changed` frames are coalesced per surface while they wait in a
 * queue, so a flood of output costs a bounded number of frames.
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
  /** Whether the subscriber may see this pane's events (its caller's `read` grant). */
  readable?: (surfaceId: number) => boolean;
}

/** Per-subscriber queue bound (docs/cli.md, Waiting and events). */
export const QUEUE_LIMIT = 1024;

/** One sink on the bus. Read it with {@link Subscription.next}. */
export class Subscription {
  #queue: BusEvent[] = [];
  /** Events in {@link #queue}, not counting `dropped` markers. */
  #events = 0;
  #changed = new Map<number, BusEvent>();
  /** The `dropped` marker at the tail of the queue, still counting. */
  #marker: { type: "dropped"; count: number } | null = null;
  #markers = new WeakSet<BusEvent>();
  #wake: (() => void) | null = null;
  #closed = false;

  /** Ends this subscriber's count as a watcher of output (see {@link EventBus.watchers}). */
  unwatch: (() => void) | null = null;

  constructor(readonly filter: Filter, private readonly _bus: EventBus) {}

  /** Whether this subscriber wants `ev`. */
  wants(ev: BusEvent): boolean {
    const { surfaces, types, readable } = this.filter;
    if (types && !types.has(ev.type)) return false;
    if (readable && ev.surface_id !== undefined && !readable(ev.surface_id)) return false;
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
    if (this.#events >= QUEUE_LIMIT) {
      // Shed the event. The marker sits where the gap is: after everything
      // queued before it and before anything queued once there is room, so a
      // client that resyncs on it never sees an older event afterwards.
      if (this.#marker) {
        this.#marker.count++;
      } else {
        this.#marker = { type: "dropped", count: 1 };
        this.#markers.add(this.#marker);
        this.#queue.push(this.#marker);
        this.#wake?.();
      }
      return;
    }
    this.#marker = null;
    const copy = { ...ev };
    if (ev.type === "surface_changed" && ev.surface_id !== undefined) {
      this.#changed.set(ev.surface_id, copy);
    }
    this.#queue.push(copy);
    this.#events++;
    this.#wake?.();
  }

  /**
   * The next event, a `dropped` marker if events were shed, or null once
   * closed. Waits at most `timeoutMs` (then returns undefined).
   */
  async next(timeoutMs?: number): Promise<BusEvent | null | undefined> {
    while (true) {
      if (this.#closed) return null;
      const ev = this.#queue.shift();
      if (ev) {
        if (this.#markers.has(ev)) {
          if (ev === this.#marker) this.#marker = null;
          return { ...ev };
        }
        this.#events--;
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

  /** Frames waiting: at most {@link QUEUE_LIMIT} events, plus a `dropped` marker at each gap. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Unsubscribes; a pending {@link next} returns null. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this._bus.unsubscribe(this);
    this.unwatch?.();
    this.#wake?.();
  }
}

/** The host's event bus. */
export class EventBus {
  #subs: Subscription[] = [];
  #taps: ((ev: BusEvent) => void)[] = [];
  /**
   * Counts a subscriber that receives `surface_changed` as a watcher of
   * the output of its `surfaces` (null: every pane's; the host sets it to
   * `PanePool.watch`); returns the release, called when the subscriber goes.
   */
  watchers: ((surfaces: ReadonlySet<number> | null) => () => void) | null = null;

  /** Calls `fn` synchronously for every event: for in-host consumers such as the agent tracker. */
  tap(fn: (ev: BusEvent) => void): void {
    this.#taps.push(fn);
  }

  /** Adds a subscriber; it sees events published from now on. */
  subscribe(filter: Filter = {}): Subscription {
    const sub = new Subscription(filter, this);
    if (!filter.types || filter.types.has("surface_changed")) {
      sub.unwatch = this.watchers?.(filter.surfaces ?? null) ?? null;
    }
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
    // Read the subscriber list first: anyone added while this event is being
    // delivered (also from inside a tap) does not see it.
    const subs = this.#subs;
    for (const fn of this.#taps) {
      try {
        fn({ ...full });
      } catch (e) {
        console.error(`paneflow: event tap failed on ${ev.type}: ${(e as Error).message}`);
      }
    }
    for (const sub of subs) {
      if (sub.wants(full)) sub.push(full);
    }
  }

  /** The deepest subscriber queue (frames waiting), for `system.stats`. */
  maxQueue(): number {
    let max = 0;
    for (const sub of this.#subs) max = Math.max(max, sub.pending);
    return max;
  }

  /** Number of subscribers. */
  get size(): number {
    return this.#subs.length;
  }
}
