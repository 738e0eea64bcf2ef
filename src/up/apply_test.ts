import assert from "node:assert/strict";
import { shQuote } from "../sh.ts";
import { programProblem } from "./plan.ts";
import { setupScript } from "./setup_script.ts";

async function sh(script: string): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command("/bin/sh", { args: ["-c", script], stdout: "piped", stderr: "piped" })
    .output();
  return { code: r.code, out: new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr) };
}

Deno.test("shQuote survives quotes, $ and newlines", async () => {
  const nasty = `it's "$HOME" \`x\`\nline2 \\ end`;
  assert.equal((await sh(`printf %s ${shQuote(nasty)}`)).out, nasty);
});

Deno.test("setupScript runs setup, warns on failure and timeout, then execs the program", async () => {
  const ok = await sh(
    setupScript({ setup: "echo 'set up'", timeoutSecs: 5, shell: "/bin/sh", command: `echo "it's on"` }),
  );
  assert.equal(ok.out, "[paneflow] setup: echo 'set up'\nset up\n[paneflow] setup done\nit's on\n");
  const failed = await sh(
    setupScript({ setup: "exit 7", timeoutSecs: 5, shell: "/bin/sh", command: "exit 4" }),
  );
  assert.match(failed.out, /warning: setup failed \(exit 7\); starting anyway/);
  assert.equal(failed.code, 4, "the program's own exit status");
  const slow = await sh(
    setupScript({ setup: "sleep 10", timeoutSecs: 1, shell: "/bin/sh", command: "echo ran" }),
  );
  assert.match(slow.out, /warning: setup timed out after 1s; starting anyway\nran\n$/);
});

Deno.test("programProblem finds programs on PATH and by path, and stays quiet when it cannot tell", () => {
  assert.equal(programProblem("sh -c 'x'", "/usr/bin:/bin", "/"), null);
  assert.equal(
    programProblem("no-such-agent-xyz --flag", "/usr/bin:/bin", "/"),
    `"no-such-agent-xyz" is not on PATH`,
  );
  assert.equal(programProblem("./missing.sh", "/bin", "/tmp"), `"./missing.sh" is not an executable file`);
  assert.equal(programProblem("FOO=1 claude", "/nowhere", "/"), null);
  assert.equal(programProblem("$AGENT run", "/nowhere", "/"), null);
});
