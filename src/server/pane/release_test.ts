import assert from "node:assert/strict";
import { DEBT_BYTES, Releaser } from "./release.ts";

/** Polls `fn` every 10 ms until it holds, or fails after `ms`. */
async function until(what: string, fn: () => boolean, ms = 5000) {
  const end = performance.now() + ms;
  while (!fn()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
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

Deno.test("release: a worker that never goes quiet still trims, within two seconds of the debt", async () => {
  let trims = 0;
  const r = new Releaser(() => trims++);
  const busy = setInterval(() => r.churn(64 << 10, performance.now()), 20);
  try {
    r.churn(DEBT_BYTES, performance.now());
    const start = performance.now();
    await until("the trim", () => trims >= 1, 5000);
    assert.ok(
      performance.now() - start >= 1900,
      `not before the longest delay: ${performance.now() - start}`,
    );
  } finally {
    clearInterval(busy);
    r.stop();
  }
});

Deno.test("release: without malloc_trim it does nothing", () => {
  const r = new Releaser(null);
  r.churn(DEBT_BYTES * 4, performance.now());
  assert.equal(r.trims, 0);
  r.stop();
});
