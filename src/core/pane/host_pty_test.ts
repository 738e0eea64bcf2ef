import assert from "node:assert/strict";
import { canSpawnDirect, DirectPty } from "./host_pty.ts";

const skip = !canSpawnDirect();
const PATH = Deno.env.get("PATH") ?? "/usr/bin:/bin";

/** Runs `script` in sh on a direct PTY; resolves with everything it printed and its exit. */
function run(script: string, during?: (p: DirectPty, seen: () => string) => Promise<void>) {
  const p = new DirectPty("/bin/sh", ["-c", script], {
    cols: 80,
    rows: 24,
    env: { PATH },
    name: "xterm-256color",
  });
  let out = "";
  const dec = new TextDecoder();
  p.onData((d) => (out += dec.decode(d, { stream: true })));
  const exited = new Promise<{ exitCode: number; signal?: number }>((r) => p.onExit(r));
  return (async () => {
    await during?.(p, () => out);
    const exit = await exited;
    return { out, exit };
  })();
}

async function until(what: string, check: () => boolean, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test({
  name: "direct PTY: every byte is read before the exit is reported, with its code",
  ignore: skip,
  async fn() {
    const { out, exit } = await run("seq 1 30000; exit 7");
    assert.equal(exit.exitCode, 7);
    assert.equal(exit.signal, undefined);
    assert.match(out, /\r\n30000\r\n$/);
  },
});

Deno.test({
  name: "direct PTY: a program killed by a signal reports its number",
  ignore: skip,
  async fn() {
    const { exit } = await run("kill -TERM $$; sleep 5");
    assert.equal(exit.signal, 15);
  },
});

Deno.test({
  name: "direct PTY: the terminal is the session's controlling terminal, sized, UTF-8, and resizes",
  ignore: skip,
  async fn() {
    const { out, exit } = await run(
      'tty; ps -o sid= -o tpgid= -p $$; stty -a | tr " ;" "\\n\\n" | grep -x -e iutf8 -e -iutf8; stty size; read x; stty size',
      async (p, seen) => {
        await until("the first size", () => /\b24 80\r\n/.test(seen()));
        p.resize(100, 30);
        p.write("\n");
      },
    );
    assert.equal(exit.exitCode, 0);
    assert.match(out, /^\/dev\/pts\/\d+\r\n/);
    // The program leads its session, and its group is the terminal's foreground.
    const [sid, tpgid] = out.split("\r\n")[1].trim().split(/\s+/).map(Number);
    assert.ok(sid > 0 && sid === tpgid, out);
    assert.match(out, /\r\niutf8\r\n/);
    assert.match(out, /\r\n30 100\r\n$/);
  },
});
