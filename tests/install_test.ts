import assert from "node:assert/strict";
import { exists, ROOT } from "./_harness.ts";

const INSTALL_SH = `${ROOT}install.sh`;
/** What install.sh asks for on this machine. */
const ASSET = `paneflow-${Deno.build.os}-${Deno.build.arch}`;
const FAKE_BINARY = '#!/bin/sh\necho "paneflow 9.9.9 (fake release, invoked as ${0##*/} $*)"\n';

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A fake release on 127.0.0.1: `files` by path; anything else is a 404. */
async function withRelease(
  files: Record<string, string>,
  fn: (base: string, requests: string[]) => Promise<void>,
): Promise<void> {
  const requests: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    requests.push(path);
    const body = files[path];
    return body === undefined ? new Response("not found", { status: 404 }) : new Response(body);
  });
  try {
    await fn(`http://127.0.0.1:${server.addr.port}/releases/v9.9.9/`, requests);
  } finally {
    await server.shutdown();
  }
}

/**
 * Runs install.sh with /bin/sh, a temp HOME and `env`; `piped` feeds the
 * script on stdin, as `curl -fsSL .../install.sh | sh` does.
 */
async function install(env: Record<string, string>, home: string, { piped = false } = {}) {
  const child = new Deno.Command("/bin/sh", {
    args: piped ? [] : [INSTALL_SH],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home, ...env },
    clearEnv: true,
    stdin: piped ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (piped) {
    const w = child.stdin.getWriter();
    await w.write(await Deno.readFile(INSTALL_SH));
    await w.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

async function withTemp(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "pf-install-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("install.sh installs the verified release binary and its two symlinks", async () => {
  const files = {
    [`/releases/v9.9.9/${ASSET}`]: FAKE_BINARY,
    [`/releases/v9.9.9/${ASSET}.sha256`]: `${await sha256(FAKE_BINARY)}  ${ASSET}\n`,
  };
  await withRelease(files, async (base, requests) => {
    await withTemp(async (dir) => {
      const bin = `${dir}/some where/bin`; // a space in the path must not matter
      const r = await install({ PANEFLOW_DOWNLOAD_BASE: base, PANEFLOW_INSTALL_DIR: bin }, dir);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.deepEqual(requests, [`/releases/v9.9.9/${ASSET}`, `/releases/v9.9.9/${ASSET}.sha256`]);

      assert.equal(await Deno.readTextFile(`${bin}/paneflow`), FAKE_BINARY);
      const mode = (await Deno.stat(`${bin}/paneflow`)).mode! & 0o777;
      assert.equal(mode, 0o755);
      for (const name of ["paneflow-mcp", "paneflow-ai-hook"]) {
        assert.ok((await Deno.lstat(`${bin}/${name}`)).isSymlink, name);
        assert.equal(await Deno.readLink(`${bin}/${name}`), "paneflow");
        const ran = await new Deno.Command(`${bin}/${name}`, { args: ["x"], stdout: "piped" }).output();
        assert.match(new TextDecoder().decode(ran.stdout), new RegExp(`invoked as ${name} x`));
      }
      assert.deepEqual((await Array.fromAsync(Deno.readDir(bin))).map((e) => e.name).sort(), [
        "paneflow",
        "paneflow-ai-hook",
        "paneflow-mcp",
      ]);
      assert.match(r.stdout, /sha256 verified/);
      assert.match(r.stdout, /installed paneflow 9\.9\.9 \(fake release/);
      assert.match(r.stdout, /is not on your PATH/);

      // Running it again replaces the install in place.
      const again = await install({ PANEFLOW_DOWNLOAD_BASE: base, PANEFLOW_INSTALL_DIR: bin }, dir);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(await Deno.readLink(`${bin}/paneflow-mcp`), "paneflow");
    });
  });
});

Deno.test("install.sh piped into sh installs to ~/.local/bin by default", async () => {
  const files = {
    [`/releases/v9.9.9/${ASSET}`]: FAKE_BINARY,
    [`/releases/v9.9.9/${ASSET}.sha256`]: `${(await sha256(FAKE_BINARY)).toUpperCase()}\n`,
  };
  await withRelease(files, async (base) => {
    await withTemp(async (home) => {
      const r = await install({ PANEFLOW_DOWNLOAD_BASE: base.replace(/\/$/, "") }, home, { piped: true });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.equal(await Deno.readTextFile(`${home}/.local/bin/paneflow`), FAKE_BINARY);
      assert.equal(await Deno.readLink(`${home}/.local/bin/paneflow-ai-hook`), "paneflow");
    });
  });
});

Deno.test("install.sh refuses a binary whose sha256 does not match and installs nothing", async () => {
  const files = {
    [`/releases/v9.9.9/${ASSET}`]: FAKE_BINARY,
    [`/releases/v9.9.9/${ASSET}.sha256`]: `${await sha256("something else")}  ${ASSET}\n`,
  };
  await withRelease(files, async (base) => {
    await withTemp(async (dir) => {
      const bin = `${dir}/bin`;
      const r = await install({ PANEFLOW_DOWNLOAD_BASE: base, PANEFLOW_INSTALL_DIR: bin }, dir);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /error: checksum mismatch for paneflow-.*nothing was installed/);
      assert.equal(await exists(bin), false, "the install dir must not be created");
    });
  });
});

Deno.test("install.sh keeps an existing install when the checksum is wrong", async () => {
  const files = {
    [`/releases/v9.9.9/${ASSET}`]: FAKE_BINARY,
    [`/releases/v9.9.9/${ASSET}.sha256`]: "not-a-digest\n",
  };
  await withRelease(files, async (base) => {
    await withTemp(async (dir) => {
      const bin = `${dir}/bin`;
      await Deno.mkdir(bin);
      await Deno.writeTextFile(`${bin}/paneflow`, "old");
      const r = await install({ PANEFLOW_DOWNLOAD_BASE: base, PANEFLOW_INSTALL_DIR: bin }, dir);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /does not hold a sha256 digest/);
      assert.equal(await Deno.readTextFile(`${bin}/paneflow`), "old");
      assert.deepEqual((await Array.fromAsync(Deno.readDir(bin))).map((e) => e.name), ["paneflow"]);
    });
  });
});

Deno.test("install.sh fails clearly when the release has no asset for this machine", async () => {
  await withRelease({}, async (base) => {
    await withTemp(async (dir) => {
      const r = await install({ PANEFLOW_DOWNLOAD_BASE: base, PANEFLOW_INSTALL_DIR: `${dir}/bin` }, dir);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, new RegExp(`could not download .*${ASSET} \\(is there a release for`));
      assert.equal(await exists(`${dir}/bin`), false);
    });
  });
});

Deno.test("install.sh names an unsupported OS or CPU", async () => {
  await withTemp(async (dir) => {
    // A fake uname earlier on PATH stands in for other machines.
    await Deno.mkdir(`${dir}/fake`);
    const uname = `${dir}/fake/uname`;
    const path = `${dir}/fake:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
    const cases: [string, string, RegExp][] = [
      ["FreeBSD", "x86_64", /unsupported operating system 'FreeBSD'/],
      ["Linux", "riscv64", /unsupported CPU architecture 'riscv64'/],
    ];
    for (const [os, arch, message] of cases) {
      await Deno.writeTextFile(uname, `#!/bin/sh\ncase "$1" in -s) echo ${os} ;; -m) echo ${arch} ;; esac\n`);
      await Deno.chmod(uname, 0o755);
      const r = await install({ PATH: path, PANEFLOW_DOWNLOAD_BASE: "http://127.0.0.1:9/" }, dir);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(await exists(`${dir}/.local`), false);
    }
  });
});

/** Absolute path of a program on PATH, or null. */
async function which(name: string): Promise<string | null> {
  const out = await new Deno.Command("sh", { args: ["-c", `command -v ${name}`], stdout: "piped" }).output();
  const path = new TextDecoder().decode(out.stdout).trim();
  return out.success && path.startsWith("/") ? path : null;
}

/** The only tools the wget-and-shasum install gets on its PATH. */
const FALLBACK_TOOLS = ["uname", "mktemp", "rm", "awk", "chmod", "mkdir", "cp", "mv", "ln", "wget", "shasum"];
const fallbackPaths = await Promise.all(FALLBACK_TOOLS.map(which));
const fallbackMissing = FALLBACK_TOOLS.filter((_, i) => !fallbackPaths[i]);

Deno.test({
  name: "install.sh falls back to wget and shasum" +
    (fallbackMissing.length ? ` (ignored: ${fallbackMissing.join(", ")} not on PATH)` : ""),
  // Without the tools there is nothing to run: reported as ignored, not as passed.
  ignore: fallbackMissing.length > 0,
  fn: wgetAndShasum,
});

async function wgetAndShasum() {
  const needed = FALLBACK_TOOLS;
  const paths = fallbackPaths;
  const files = {
    [`/releases/v9.9.9/${ASSET}`]: FAKE_BINARY,
    [`/releases/v9.9.9/${ASSET}.sha256`]: `${await sha256(FAKE_BINARY)}  ${ASSET}\n`,
  };
  await withRelease(files, async (base, requests) => {
    await withTemp(async (dir) => {
      // A PATH with only these tools: no curl, no sha256sum.
      await Deno.mkdir(`${dir}/tools`);
      for (const [i, name] of needed.entries()) await Deno.symlink(paths[i]!, `${dir}/tools/${name}`);
      const bin = `${dir}/bin`;
      const r = await install({
        PATH: `${dir}/tools`,
        PANEFLOW_DOWNLOAD_BASE: base,
        PANEFLOW_INSTALL_DIR: bin,
      }, dir);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.equal(requests.length, 2);
      assert.equal(await Deno.readTextFile(`${bin}/paneflow`), FAKE_BINARY);
      assert.equal(await Deno.readLink(`${bin}/paneflow-mcp`), "paneflow");
    });
  });
}
