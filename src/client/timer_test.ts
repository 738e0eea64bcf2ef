import assert from "node:assert/strict";
import { deadline, later, sleep } from "./timer.ts";

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

Deno.test("deadline fires while an operation is pending; a cancelled one never", async () => {
  const path = `${await Deno.makeTempDir()}/never.sock`;
  const listener = Deno.listen({ transport: "unix", path });
  const accepted = listener.accept();
  const conn = await Deno.connect({ transport: "unix", path });
  // A read of a peer that never answers: the only thing keeping the process running.
  const read = conn.read(new Uint8Array(16)).catch(() => null);
  try {
    const fired: string[] = [];
    const cancel = deadline(10, () => fired.push("cancelled"));
    cancel();
    const t0 = performance.now();
    await new Promise<void>((resolve) => deadline(40, () => (fired.push("fired"), resolve())));
    assert.ok(performance.now() - t0 >= 35);
    assert.deepEqual(fired, ["fired"]);
  } finally {
    conn.close();
    await read;
    (await accepted).close();
    listener.close();
  }
});
