import assert from "node:assert/strict";
import { ROOT } from "./_harness.ts";

/** The script the `tour` task runs (deno.json: `deno run -A scripts/demo.ts`; `demo` is now a flow). */
async function demoTaskScript(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const task: string = config.tasks.tour;
  const m = /^deno run (.*)$/.exec(task);
  assert.ok(m, `tour task should be a "deno run" command, got: ${task}`);
  return m[1].split(/\s+/);
}

Deno.test("the tour task tours a private host through the CLI and cleans up", async () => {
  const env = Deno.env.toObject();
  // The demo must not touch a host of the user's: it brings its own socket.
  delete env.PANEFLOW_SOCKET_PATH;
  delete env.PANEFLOW_CONFIG;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...await demoTaskScript()],
    cwd: ROOT,
    env: { ...env, NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  const all = `${stdout}\n--- stderr ---\n${stderr}`;
  assert.equal(out.code, 0, all);

  for (
    const marker of [
      "$ paneflow serve --detach",
      "$ paneflow new ",
      "$ paneflow split h",
      "$ paneflow ls --human",
      "<untrusted_terminal_output id=",
      "BUILD OK",
      "line 3: step compile",
      "I am pane 2",
      "sleep 600",
      "$ paneflow key shell ctrl-c",
      "sleep stopped, status 130",
      "$ paneflow rename shell console",
      '"layout":"tiled"',
      "$ paneflow close build",
      "$ paneflow api system.shutdown",
      "Demo complete.",
    ]
  ) {
    assert.ok(stdout.includes(marker), `demo output lacks ${JSON.stringify(marker)}:\n${all}`);
  }
  assert.match(stdout, /build\.sh\s+notes\.txt/); // the shell pane's ls
  if (Deno.build.os === "linux") {
    // `ls --human` shows the finished build and the shell's live foreground command.
    assert.match(stdout, /^1 +build +0 .*exited 0/m);
    assert.match(stdout, /^2 +shell +0 .*sleep 600$/m);
  }
  assert.ok(stdout.split("\n").length <= 80, `demo output should stay short:\n${stdout}`);

  // It removed its temp dir (and with it the socket).
  const dir = /^DEMO=(.+)$/m.exec(stdout)?.[1];
  assert.ok(dir, stdout);
  await assert.rejects(Deno.lstat(dir), Deno.errors.NotFound);
});
