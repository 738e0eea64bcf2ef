import assert from "node:assert/strict";
import { NotifySink } from "../spec/notify.ts";
import type { NotifyBody } from "./body.ts";
import { sendOnce, SinkQueue } from "./delivery.ts";

const body = { event: "test", replies: {} } as unknown as NotifyBody;

type Outcome = { ok: boolean; attempts: number; error?: string };

function outcome(q: SinkQueue): Promise<Outcome> {
  return new Promise((resolve) => q.push({ body, done: resolve }));
}

Deno.test("delivery: retries with backoff, one log line per outage, one when back", async () => {
  const sink = NotifySink.parse({ type: "webhook", url: "http://127.0.0.1:9/", retries: 1 });
  const log: string[] = [];
  let fail = 3;
  const q = new SinkQueue("hook", sink, (l) => log.push(l), () => {
    if (fail-- > 0) return Promise.reject(new Error("connection refused"));
    return Promise.resolve();
  });
  try {
    const first = await outcome(q);
    assert.deepEqual(first, { ok: false, attempts: 2, error: "connection refused" });
    const second = await outcome(q);
    assert.deepEqual(second, { ok: true, attempts: 2 });
    assert.equal(log.length, 2, log.join("\n"));
    assert.match(log[0], /^notify: sink "hook" failed: connection refused; retrying with backoff/);
    assert.match(log[1], /reachable again/);
    assert.deepEqual([q.stats.sent, q.stats.failed, q.stats.down], [1, 1, false]);
  } finally {
    q.close();
  }
});

Deno.test("delivery: the rate limit drops what is over it", async () => {
  const sink = NotifySink.parse({ type: "webhook", url: "http://127.0.0.1:9/", rate_per_min: 2 });
  const q = new SinkQueue("hook", sink, () => {}, () => Promise.resolve());
  try {
    const all = await Promise.all([outcome(q), outcome(q), outcome(q)]);
    assert.deepEqual(all.map((o) => o.ok), [true, true, false]);
    assert.match(all[2].error!, /rate limit of 2 a minute/);
    assert.equal(q.stats.dropped, 1);
  } finally {
    q.close();
  }
});

Deno.test("delivery: a hung endpoint times out; the event loop keeps running meanwhile", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const c of listener) conns.push(c);
  })().catch(() => {});
  try {
    const port = (listener.addr as Deno.NetAddr).port;
    const sink = NotifySink.parse({ type: "webhook", url: `http://127.0.0.1:${port}/`, timeout_ms: 300 });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const started = Date.now();
    await assert.rejects(() => sendOnce(sink, body), /timed out/);
    clearInterval(timer);
    assert.ok(Date.now() - started < 2000);
    assert.ok(ticks >= 10, `the loop ran ${ticks} timers while the request hung`);
  } finally {
    listener.close();
    for (const c of conns) c.close();
    await accepting;
  }
});

Deno.test("delivery: a command sink gets the JSON on stdin; a failing one says why", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ok = NotifySink.parse({ type: "command", command: `cat > ${dir}/got.json` });
    await sendOnce(ok, body);
    assert.equal(JSON.parse(await Deno.readTextFile(`${dir}/got.json`)).event, "test");
    const bad = NotifySink.parse({ type: "command", command: "echo nope >&2; exit 3" });
    await assert.rejects(() => sendOnce(bad, body), /exited with code 3: nope/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
