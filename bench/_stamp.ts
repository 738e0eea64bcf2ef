/**
 * A pane program for bench/events.ts: for every line it reads it prints
 * `<line> <wall-clock ms>` at once, in one write. The time is
 * `performance.timeOrigin + performance.now()` (microsecond precision,
 * comparable across processes on one machine).
 *
 * @module
 */
const enc = new TextEncoder();
const dec = new TextDecoder();
let buf = "";
for await (const chunk of Deno.stdin.readable) {
  buf += dec.decode(chunk, { stream: true });
  let nl: number;
  while ((nl = buf.search(/[\r\n]/)) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (!line) continue;
    const now = performance.timeOrigin + performance.now();
    Deno.stdout.writeSync(enc.encode(`${line} ${now.toFixed(3)}\n`));
  }
}
