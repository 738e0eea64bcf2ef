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

Deno.test("prefill: the tty check knows read's syscall number on each architecture", async () => {
  const { blockedReadingFd0 } = await import("../agents/readiness.ts");
  assert.equal(blockedReadingFd0("0 0x0 0x7ffd 0x1 0x0 0x0 0x0 0x7ffd 0x7f12", "x86_64"), true);
  assert.equal(
    blockedReadingFd0("0 0x3 0x7ffd 0x1 0x0 0x0 0x0 0x7ffd 0x7f12", "x86_64"),
    false,
    "another fd",
  );
  assert.equal(blockedReadingFd0("63 0x0 0xffff 0x1 0x0 0x0 0x0 0xffff 0xffff", "aarch64"), true);
  assert.equal(
    blockedReadingFd0("0 0x0 0xffff 0x1 0x0 0x0 0x0 0xffff 0xffff", "aarch64"),
    false,
    "io_setup on arm64",
  );
  assert.equal(blockedReadingFd0("63 0x0 0x7ffd 0x1 0x0 0x0 0x0 0x7ffd 0x7f12", "x86_64"), false);
  assert.equal(blockedReadingFd0("running", "x86_64"), false);
  // This machine: a process blocked reading its stdin is seen as such.
  const cat = new Deno.Command("cat", { stdin: "piped", stdout: "null" }).spawn();
  try {
    let seen = false;
    for (let i = 0; i < 100 && !seen; i++) {
      seen = blockedReadingFd0(await Deno.readTextFile(`/proc/${cat.pid}/syscall`));
      if (!seen) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(seen, "cat blocked on its stdin");
  } finally {
    await cat.stdin.close();
    await cat.status;
  }
});
