import assert from "node:assert/strict";
import { memoryPair } from "./_memory.ts";
import { encodeLsp, lsp, ndjson } from "./framing.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

Deno.test("ndjson: lines split across reads, several per read, and a last line without its newline", async () => {
  const [a, b] = memoryPair();
  const f = ndjson(b);
  await a.write(enc.encode('{"a":1}\n{"b"'));
  await a.write(enc.encode(':2}\n\n{"c":3}'));
  a.close();
  const got: string[] = [];
  while (true) {
    const fr = await f.next();
    if (fr === null) break;
    assert.ok(fr instanceof Uint8Array);
    got.push(dec.decode(fr));
  }
  assert.deepEqual(got, ['{"a":1}', '{"b":2}', "", '{"c":3}']);
});

Deno.test("ndjson: a message over the cap is reported (not consumed); one at the cap passes", async () => {
  const [a, b] = memoryPair();
  const f = ndjson(b, { maxBytes: 8 });
  await a.write(enc.encode("12345678\n123456789"));
  const ok = await f.next();
  assert.ok(ok instanceof Uint8Array);
  assert.equal(dec.decode(ok), "12345678");
  const bad = await f.next();
  assert.ok(bad && !(bad instanceof Uint8Array) && "fatal" in bad && bad.tooLong);
  assert.match(bad.fatal, /exceeds 8 bytes/);
});

/** Every frame until the end, as text or `skipped`. */
async function drain(f: { next(): Promise<import("./framing.ts").Frame> }): Promise<string[]> {
  const got: string[] = [];
  while (true) {
    const fr = await f.next();
    if (fr === null) return got;
    if (fr instanceof Uint8Array) got.push(dec.decode(fr));
    else if ("skipped" in fr) got.push(`skipped: ${fr.skipped}`);
    else return [...got, `fatal: ${fr.fatal}`];
  }
}

Deno.test("ndjson with skipTooLong: an oversized line, whole or still arriving, is skipped to its newline", async () => {
  const [a, b] = memoryPair();
  const f = ndjson(b, { maxBytes: 8, skipTooLong: true });
  const sent = (async () => {
    await a.write(enc.encode("ok-1\n123456789\nok-2\n"));
    // A line that goes on over several reads: reported once, the rest dropped as it comes.
    await a.write(enc.encode("x".repeat(20)));
    await a.write(enc.encode("y".repeat(20)));
    await a.write(enc.encode("z\nok-3\nlast"));
    a.close();
  })();
  const got = await drain(f);
  await sent;
  const skip = "skipped: Invalid request: message exceeds 8 bytes; skipped";
  assert.deepEqual(got, ["ok-1", skip, "ok-2", skip, "ok-3", "last"]);
});

Deno.test("lsp with skipTooLong: a body over the cap is skipped by its Content-Length; without it, fatal", async () => {
  const body = JSON.stringify({ pad: "x".repeat(40) });
  const frames = [
    encodeLsp({ a: 1 }),
    enc.encode(`Content-Length: ${body.length}\r\n\r\n${body}`),
    encodeLsp({ b: 2 }),
  ];
  for (const skipTooLong of [true, false]) {
    const [a, b] = memoryPair();
    const f = lsp(b, { maxBytes: 16, skipTooLong });
    const sent = (async () => {
      for (const fr of frames) {
        // In small pieces: the skipped body spans reads.
        for (let i = 0; i < fr.length; i += 7) await a.write(fr.subarray(i, i + 7));
      }
      a.close();
    })();
    const got = await drain(f);
    if (!skipTooLong) b.close();
    await sent.catch(() => {});
    assert.deepEqual(
      got,
      skipTooLong
        ? ['{"a":1}', "skipped: Invalid request: message exceeds 16 bytes; skipped", '{"b":2}']
        : ['{"a":1}', "fatal: Invalid request: message exceeds 16 bytes; connection closed"],
    );
  }
});

Deno.test("ndjson: a message larger than the read buffer grows it; the buffer is reused by index", async () => {
  const [a, b] = memoryPair();
  const f = ndjson(b);
  const big = "x".repeat(300_000);
  for (let i = 0; i < 3; i++) {
    const line = enc.encode(JSON.stringify({ i, big }) + "\n");
    for (let off = 0; off < line.length; off += 10_000) await a.write(line.subarray(off, off + 10_000));
  }
  for (let i = 0; i < 3; i++) {
    const fr = await f.next();
    assert.ok(fr instanceof Uint8Array);
    assert.deepEqual(JSON.parse(dec.decode(fr)), { i, big });
  }
});

Deno.test("lsp: frames in pieces, other headers ignored, and malformed headers are fatal", async () => {
  const [a, b] = memoryPair();
  const f = lsp(b);
  const frame = encodeLsp({ hello: "wörld" });
  await a.write(frame.subarray(0, 5));
  await a.write(frame.subarray(5));
  await a.write(enc.encode("Content-Type: x\r\nContent-Length: 2\r\n\r\n{}"));
  await a.write(enc.encode("Nonsense\r\n\r\n"));
  const one = await f.next();
  assert.ok(one instanceof Uint8Array);
  assert.deepEqual(JSON.parse(dec.decode(one)), { hello: "wörld" });
  const two = await f.next();
  assert.ok(two instanceof Uint8Array);
  assert.equal(dec.decode(two), "{}");
  const bad = await f.next();
  assert.ok(bad && !(bad instanceof Uint8Array) && "fatal" in bad);
  assert.match(bad.fatal, /malformed header "Nonsense"/);
});

Deno.test("both framings write what the other side reads", async () => {
  for (const make of [ndjson, lsp]) {
    const [a, b] = memoryPair();
    await make(a).write({ n: 1, s: "ünï" });
    const fr = await make(b).next();
    assert.ok(fr instanceof Uint8Array);
    assert.deepEqual(JSON.parse(dec.decode(fr)), { n: 1, s: "ünï" });
  }
});
