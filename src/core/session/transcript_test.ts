import assert from "node:assert/strict";
import { Transcript } from "./transcript.ts";

Deno.test("transcript keeps the last max characters and reports evictions", () => {
  const t = new Transcript(10);
  t.append("hello ");
  assert.equal(t.since(0).text, "hello ");
  t.append("world, again");
  assert.equal(t.text(), "rld, again");
  assert.equal(t.text().length, 10);
  assert.equal(t.written, 18);
  assert.deepEqual(t.since(6), { text: "rld, again", dropped: true });
  assert.deepEqual(t.since(16), { text: "in", dropped: false });
  assert.deepEqual(t.since(18), { text: "", dropped: false });
});

Deno.test("transcript counts code points and decodes UTF-8 across chunks", () => {
  const t = new Transcript(3);
  const bytes = new TextEncoder().encode("a😀b€c");
  for (const b of bytes) t.push(new Uint8Array([b]));
  assert.equal(t.written, 5);
  assert.equal(t.text(), "b€c");
  assert.equal(t.tail(2), "€c");
});
