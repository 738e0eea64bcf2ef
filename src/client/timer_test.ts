import assert from "node:assert/strict";
import { later, sleep } from "./timer.ts";

Deno.test("later fires once after its delay, a cancelled one never; sleep resolves", async () => {
  const fired: string[] = [];
  const t0 = performance.now();
  later(20, () => fired.push("a"));
  const cancel = later(10, () => fired.push("b"));
  cancel();
  await sleep(60);
  assert.deepEqual(fired, ["a"]);
  assert.ok(performance.now() - t0 >= 55);
});
