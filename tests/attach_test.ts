import assert from "node:assert/strict";
import { ROOT, waitUntil, withHost } from "./_harness.ts";

// `attach` needs a terminal: script(1) gives it one; our stdin goes to that terminal.
Deno.test({
  name: "attach: shows the pane, forwards typed keys, and Ctrl-] detaches leaving the pane running",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await withHost({}, async (host) => {
      await host.json(["new", "--pane-name", "sh", "-c", "exec sh"]);
      const inner = [
        Deno.execPath(),
        "run",
        "-A",
        "--quiet",
        `--config=${ROOT}deno.json`,
        `${ROOT}main.ts`,
        "attach",
        "sh",
      ]
        .map((a) => `'${a}'`).join(" ");
      const child = new Deno.Command("script", {
        args: ["-qfec", inner, "/dev/null"],
        env: { ...host.env, TERM: "xterm-256color" },
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const writer = child.stdin.getWriter();
      const enc = new TextEncoder();
      let screen = "";
      const reading = (async () => {
        for await (const chunk of child.stdout) screen += new TextDecoder().decode(chunk);
      })();
      await waitUntil("the attach status line", () => screen.includes("Ctrl-] to detach"), {
        timeoutMs: 15_000,
      });
      await writer.write(enc.encode("echo attached-$((40+2))\r"));
      await waitUntil("the typed command's output in the pane", async () => {
        const r = await host.cli(["read", "sh", "--raw"]);
        return r.stdout.includes("attached-42");
      });
      await waitUntil("the redraw showing it", () => screen.includes("attached-42"));
      await writer.write(enc.encode("\x1d"));
      await writer.close();
      const status = await child.status;
      await reading;
      await child.stderr.cancel();
      assert.equal(status.code, 0);
      assert.match(screen, /detached from pane 1 \(sh\)/);
      const ls = await host.json<{ surfaces: { name: string; exited: boolean }[] }>(["ls"]);
      assert.equal(ls.surfaces.find((s) => s.name === "sh")?.exited, false, "the pane keeps running");
    });
  },
});

Deno.test("attach: refuses without a terminal", async () => {
  await withHost({}, async (host) => {
    await host.json(["new", "--pane-name", "sh", "-c", "exec sh"]);
    const r = await host.cli(["attach", "sh"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /needs a terminal/);
  });
});
