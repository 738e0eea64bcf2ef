import assert from "node:assert/strict";
import { ROOT, runCommand } from "./_harness.ts";
import { executableKind } from "../scripts/compile.ts";

/** Runs the compile task's script with `env` on top of ours. */
async function compile(args: string[], env: Record<string, string | undefined> = {}) {
  const full: Record<string, string> = { ...Deno.env.toObject(), NO_COLOR: "1" };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete full[k];
    else full[k] = v;
  }
  return await runCommand(Deno.execPath(), ["run", "-A", `${ROOT}scripts/compile.ts`, ...args], {
    cwd: ROOT,
    env: full,
    clearEnv: true,
  });
}

function elfHeader(machine: number): Uint8Array {
  const b = new Uint8Array(64);
  b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]);
  new DataView(b.buffer).setUint16(18, machine, true);
  return b;
}

Deno.test("executableKind tells ELF and Mach-O architectures and zips apart", () => {
  assert.deepEqual(executableKind(elfHeader(0x3e)), { os: "linux", arch: "x86_64" });
  assert.deepEqual(executableKind(elfHeader(0xb7)), { os: "linux", arch: "aarch64" });
  const macho = new Uint8Array(32);
  new DataView(macho.buffer).setUint32(0, 0xfeedfacf, true);
  new DataView(macho.buffer).setUint32(4, 0x0100000c, true);
  assert.deepEqual(executableKind(macho), { os: "darwin", arch: "aarch64" });
  assert.equal(executableKind(new Uint8Array([0x50, 0x4b, 3, 4, 0, 0])), "a zip archive");
  assert.equal(executableKind(new TextEncoder().encode("#!/bin/sh\n")), null);
});

Deno.test("compile: usage errors exit 2 and name the problem", async () => {
  const bad = await compile(["--target", "x86_64-pc-windows-msvc"]);
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /Unsupported target "x86_64-pc-windows-msvc"; use one of: x86_64-unknown-linux-gnu/,
  );
  const unknown = await compile(["--frobnicate"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /--frobnicate/);
  const help = await compile(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /DENORT_BIN/);
});

Deno.test("compile: a DENORT_BIN that cannot be the target's denort is refused before building", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pf-compile-" });
  try {
    const out = `${dir}/out/paneflow`;
    const missing = await compile(["--output", out], { DENORT_BIN: `${dir}/nope` });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /DENORT_BIN=.*nope does not exist.*dl\.deno\.land\/release\/v/);

    await Deno.writeFile(`${dir}/denort.zip`, new Uint8Array([0x50, 0x4b, 3, 4, 1, 2, 3, 4]));
    const zip = await compile(["--output", out], { DENORT_BIN: `${dir}/denort.zip` });
    assert.equal(zip.code, 1);
    assert.match(zip.stderr, /is a zip archive; unzip it/);

    await Deno.writeFile(`${dir}/denort`, elfHeader(0x3e));
    const wrong = await compile(["--target", "aarch64-unknown-linux-gnu", "--output", out], {
      DENORT_BIN: `${dir}/denort`,
    });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /is a linux x86_64 executable, but the target is aarch64-unknown-linux-gnu/);

    await assert.rejects(Deno.lstat(`${dir}/out`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "compile: deno compile embeds the program; a runtime that does not run it is caught and removed",
  // deno itself is not denort: the build succeeds, the smoke test must reject it.
  ignore: !["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"].includes(Deno.build.target),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "pf-compile-" });
    try {
      const out = `${dir}/paneflow`;
      const r = await compile(["--output", out], { DENORT_BIN: Deno.execPath() });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /Embedded Files/); // deno compile got as far as writing the binary
      assert.match(r.stderr, /node_modules/); // with the npm packages
      assert.match(r.stderr, /does not run as paneflow .*Is DENORT_BIN the denort/);
      await assert.rejects(Deno.lstat(out), Deno.errors.NotFound);
      await assert.rejects(Deno.lstat(`${dir}/paneflow-mcp`), Deno.errors.NotFound);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
