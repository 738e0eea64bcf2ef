import assert from "node:assert/strict";
import { type BusEvent, EventBus, QUEUE_LIMIT, type Subscription } from "./bus.ts";

/** Everything queued for `sub`, without waiting. */
async function drain(sub: Subscription): Promise<BusEvent[]> {
  const out: BusEvent[] = [];
  while (sub.pending > 0) out.push((await sub.next())!);
  return out;
}

Deno.test("bus: a subscriber added during a dispatch does not see that event", async () => {
  const bus = new EventBus();
  const late: Subscription[] = [];
  const first = bus.subscribe();
  // A sink that subscribes another sink while the event is being delivered.
  const orig = first.push.bind(first);
  first.push = (ev) => {
    orig(ev);
    if (!late.length) late.push(bus.subscribe());
  };
  bus.publish({ type: "workspace_created", workspace: 0 });
  assert.equal(late.length, 1);
  assert.deepEqual(await drain(late[0]), []);
  bus.publish({ type: "workspace_closed", workspace: 0 });
  assert.deepEqual((await drain(late[0])).map((e) => e.type), ["workspace_closed"]);
  assert.deepEqual((await drain(first)).map((e) => e.type), ["workspace_created", "workspace_closed"]);
});

Deno.test("bus: surface_changed is coalesced per surface while it waits, keeping the newest generation", async () => {
  const bus = new EventBus();
  const sub = bus.subscribe();
  for (let g = 1; g <= 10_000; g++) {
    bus.publish({ type: "surface_changed", surface_id: 1, output_generation: g });
    bus.publish({ type: "surface_changed", surface_id: 2, output_generation: g * 2 });
  }
  assert.equal(sub.pending, 2);
  const evs = await drain(sub);
  assert.deepEqual(evs.map((e) => [e.surface_id, e.output_generation]), [[1, 10_000], [2, 20_000]]);
  // Once delivered, the next change is a new frame.
  bus.publish({ type: "surface_changed", surface_id: 1, output_generation: 10_001 });
  assert.deepEqual((await drain(sub)).map((e) => e.output_generation), [10_001]);
});

Deno.test("bus: a full queue sheds new events and reports them with one dropped marker at the gap", async () => {
  const bus = new EventBus();
  const slow = bus.subscribe();
  const fast = bus.subscribe();
  const extra = 300;
  for (let i = 0; i < QUEUE_LIMIT + extra; i++) {
    bus.publish({ type: "surface_created", surface_id: i + 1 });
    await drain(fast);
  }
  assert.equal(slow.pending <= QUEUE_LIMIT + 1, true, "bounded");
  // The reader takes one, then more events arrive after the gap.
  const firstOut = await slow.next();
  assert.equal(firstOut?.surface_id, 1);
  bus.publish({ type: "surface_created", surface_id: 99_999 });
  const rest = await drain(slow);
  const ids = rest.map((e) => (e.type === "dropped" ? `dropped:${e.count}` : e.surface_id));
  // Everything queued before the shedding comes first, then the marker, then what came after it.
  const before = Array.from({ length: QUEUE_LIMIT - 1 }, (_, i) => i + 2);
  assert.deepEqual(ids, [...before, `dropped:${extra}`, 99_999]);
});

Deno.test("bus: filters by surface and type; a surface filter excludes unscoped events", async () => {
  const bus = new EventBus();
  const scoped = bus.subscribe({ surfaces: new Set([1]) });
  const typed = bus.subscribe({ types: new Set(["surface_exited"]) });
  bus.publish({ type: "workspace_created", workspace: 0 });
  bus.publish({ type: "surface_created", surface_id: 1 });
  bus.publish({ type: "surface_created", surface_id: 2 });
  bus.publish({ type: "surface_exited", surface_id: 2, exit_code: 0 });
  assert.deepEqual((await drain(scoped)).map((e) => `${e.type}:${e.surface_id}`), ["surface_created:1"]);
  assert.deepEqual((await drain(typed)).map((e) => `${e.type}:${e.surface_id}`), ["surface_exited:2"]);
});

Deno.test("bus: close unsubscribes and wakes a pending next with null", async () => {
  const bus = new EventBus();
  const sub = bus.subscribe();
  const pending = sub.next();
  sub.close();
  assert.equal(await pending, null);
  assert.equal(bus.size, 0);
  bus.publish({ type: "workspace_created" });
  assert.equal(sub.pending, 0);
});

Deno.test("bus: a subscriber that receives surface_changed counts as a watcher of output until it closes", () => {
  const bus = new EventBus();
  let watching = 0;
  bus.watchers = () => {
    watching++;
    return () => watching--;
  };
  const lifecycle = bus.subscribe({ types: new Set(["surface_created", "surface_closed"]) });
  assert.equal(watching, 0, "a subscriber to lifecycle events only watches no output");
  const all = bus.subscribe({});
  const one = bus.subscribe({ surfaces: new Set([3]), types: new Set(["surface_changed"]) });
  assert.equal(watching, 2);
  all.close();
  all.close();
  assert.equal(watching, 1, "closing twice releases once");
  one.close();
  lifecycle.close();
  assert.equal(watching, 0);
});
