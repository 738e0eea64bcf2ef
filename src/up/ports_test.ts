import assert from "node:assert/strict";
import { allocatePorts, portFree } from "./ports.ts";

Deno.test("allocatePorts strides by 10 from the base, skipping bound and taken ports", () => {
  const bound = new Set([3000, 3020]);
  const free = (p: number) => !bound.has(p);
  assert.deepEqual(allocatePorts(3000, 3, { free }), [3010, 3030, 3040]);
  assert.deepEqual(allocatePorts(3000, 2, { free, taken: new Set([3010]) }), [3030, 3040]);
  assert.deepEqual(allocatePorts(3000, 0, { free }), []);
});

Deno.test("allocatePorts fails clearly when the range runs out", () => {
  assert.throws(
    () => allocatePorts(65_530, 2, { free: () => true }),
    /No free port from 65530 in strides of 10: 1 of 2 found/,
  );
});

Deno.test("portFree sees a port bound on 127.0.0.1", () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    assert.equal(portFree((l.addr as Deno.NetAddr).port), false);
  } finally {
    l.close();
  }
});
