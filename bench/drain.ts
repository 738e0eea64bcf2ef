/**
 * The raw limit: spawn `cat <file>` in a PTY with node-pty and count what
 * arrives, with no terminal emulation. Run as its own process:
 *
 *   deno run -A bench/drain.ts <file> <cols> <rows>
 *
 * Prints one JSON line: `{bytes, ms}` (bytes received, raw as the pane
 * worker reads them, and the time from spawn to the last byte after exit).
 *
 * @module
 */
import pty from "@lydell/node-pty";

const [file, cols = "200", rows = "50"] = Deno.args;
const t0 = performance.now();
let bytes = 0;
let last = t0;
const p = pty.spawn("/bin/sh", ["-c", `cat '${file}'`], {
  name: "xterm-256color",
  cols: Number(cols),
  rows: Number(rows),
  cwd: Deno.cwd(),
  env: Deno.env.toObject(),
  encoding: null,
});
(p.onData as unknown as (fn: (d: Uint8Array) => void) => void)((d) => {
  bytes += d.length;
  last = performance.now();
});
// deno-lint-ignore no-explicit-any
const socket = (p as any)._socket;
const closed = new Promise<void>((resolve) => {
  if (socket?.once) socket.once("close", () => resolve());
  else resolve();
});
await new Promise<void>((resolve) => p.onExit(() => resolve()));
await closed;
console.log(JSON.stringify({ bytes, ms: last - t0 }));
Deno.exit(0);
