import assert from "node:assert/strict";
import { DEBT_BYTES, Releaser, WATCHED_MAX_DELAY_MS } from "./release.ts";

/** Polls `fn` every 10 ms until it holds, or fails after `ms`. */
async function until(what: string, fn: () => boolean, ms = 5000) {
  const end = performance.now() + ms;
  while (!fn()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * A releaser on a clock of the test's: output keeps coming at every tick of
 * it (a worker busy however late the timers run), for `ms` of that clock.
 */
async function busyFor(r: Releaser, clock: { t: number }, ms: number, tick: () => void = () => {}) {
  const end = clock.t + ms;
  while (clock.t < end) {
    clock.t += 100;
    r.churn(64 << 10, clock.t);
    tick();
    await new Promise((res) => setTimeout(res, 30));
  }
}

Deno.test("release: a worker trims once its debt is due and it has gone quiet, not before", async () => {
  let trims = 0;
  const r = new Releaser(() => trims++);
  try {
    r.churn(DEBT_BYTES - 1, performance.now());
    const start = performance.now();
    r.churn(1, start);
    assert.equal(trims, 0, "not in the same turn");
    await until("the trim", () => trims === 1);
    assert.ok(performance.now() - start >= 190, "only after the quiet spell");
    assert.equal(r.trims, 1);
    // The debt is paid: a little more output is no reason for another.
    r.churn(1024, performance.now());
    await new Promise((res) => setTimeout(res, 400));
    assert.equal(trims, 1);
  } finally {
    r.stop();
  }
});

Deno.test("release: a worker that never goes quiet still trims, two seconds after the debt", async () => {
  let trims = 0;
  const clock = { t: 0 };
  const r = new Releaser(() => trims++, () => clock.t);
  try {
    r.churn(DEBT_BYTES, clock.t);
    await busyFor(r, clock, 1900, () => assert.equal(trims, 0, `no trim at ${clock.t} ms`));
    await busyFor(r, clock, 1000);
    await until("the trim", () => trims === 1);
  } finally {
    r.stop();
  }
});

Deno.test("release: while a client watches, a busy worker waits longer, and trims at once when quiet", async () => {
  let trims = 0;
  const clock = { t: 0 };
  const r = new Releaser(() => trims++, () => clock.t);
  r.maxDelay = () => WATCHED_MAX_DELAY_MS;
  try {
    r.churn(DEBT_BYTES, clock.t);
    await busyFor(r, clock, 3000, () => assert.equal(trims, 0, `no trim at ${clock.t} ms`));
    clock.t += 1000; // quiet
    await until("the trim once quiet", () => trims === 1);
  } finally {
    r.stop();
  }
});

/**
 * A releaser on a clock of the test's that counts its trims and collections,
 * its external memory `ext.bytes` (10 MiB at the start) looked at every 20 ms.
 */
function externalWatched() {
  const n = { trims: 0, collections: 0, thorough: 0 };
  const clock = { t: 0 };
  const ext = { bytes: 10 << 20 };
  const r = new Releaser(
    () => n.trims++,
    () => clock.t,
    (thorough) => thorough ? n.thorough++ : n.collections++,
  );
  r.watchExternal(() => ext.bytes, 20);
  return { r, n, clock, ext };
}

Deno.test("release: garbage of requests counts too: a worker whose ArrayBuffers grew collects and trims, quiet or not", async () => {
  const { r, n, clock, ext } = externalWatched();
  try {
    ext.bytes -= 1 << 20; // V8 collected on its own: growth counts from here
    await new Promise((res) => setTimeout(res, 100));
    ext.bytes += DEBT_BYTES; // the debt counted from the low (9 MiB); from the start (10 MiB) it would not be
    // Some output all the while (64 KiB a tick): never quiet, but no flood either.
    await busyFor(r, clock, 3000);
    await until("the trim", () => n.trims === 1);
    assert.equal(n.collections, 1, "V8 left the garbage: it is collected first");
    assert.equal(
      n.thorough,
      0,
      "plainly: a thorough collection holds V8's helper threads for 100 ms and more",
    );
    clock.t += 1000; // quiet from here
    // After the trim, growth counts from what is left: a little more is no reason for another.
    ext.bytes += DEBT_BYTES / 2;
    await new Promise((res) => setTimeout(res, 400));
    assert.equal(n.trims, 1);
    ext.bytes += DEBT_BYTES / 2;
    await until("the second trim", () => n.trims === 2);
  } finally {
    r.stop();
  }
});

Deno.test("release: in a flood a worker trims without stopping to collect, even when its ArrayBuffers grew", async () => {
  const { r, n, clock, ext } = externalWatched();
  try {
    ext.bytes += DEBT_BYTES;
    r.churn(DEBT_BYTES, clock.t); // a flood's worth of output
    await busyFor(r, clock, 3000); // and more all the while
    await until("the trim", () => n.trims === 1);
    assert.equal(n.collections + n.thorough, 0, "no 10–50 ms stop in the middle of a flood");
  } finally {
    r.stop();
  }
});

Deno.test("release: without malloc_trim it does nothing", () => {
  const r = new Releaser(null);
  r.churn(DEBT_BYTES * 4, performance.now());
  assert.equal(r.trims, 0);
  r.stop();
});
