/**
 * Builds the self-contained `paneflow` executable with `deno compile`
 * (`deno task compile`), then puts the `paneflow-mcp` and
 * `paneflow-ai-hook` names next to it as symlinks (argv[0] dispatch).
 *
 *   deno task compile [--target <triple>] [--output <file>] [--release] [--no-smoke]
 *
 * `deno compile` appends the program to `denort`, a slim Deno runtime that
 * it normally downloads once per Deno version and target from dl.deno.land
 * into `$DENO_DIR/dl/`. Where that is not reachable, download
 * `denort-<target>.zip` for this Deno version elsewhere, unzip it and point
 * `DENORT_BIN` at the `denort` executable: `deno compile` then reads that
 * file instead of downloading (it uses it for whatever `--target` says, so
 * it must be the runtime for that target; this script checks the format).
 *
 * What goes into the binary: everything `main.ts` imports; the verb
 * modules, which src/verbs/mod.ts imports through a variable (so that
 * `paneflow ls` never loads zod or node-pty) and so need `--include`; the
 * pane, /proc and queue workers, which are only named in `new Worker(new
 * URL(...))` and so need `--include` too; and the project's `node_modules` (npm packages,
 * with node-pty's native addon for the target platform). On macOS node-pty
 * also runs a `spawn-helper` executable from its package, which must be a
 * real file, so darwin targets are built `--self-extracting` (the embedded
 * files are unpacked beside the binary on first run).
 *
 * After a build for this machine, a smoke test runs the new binary: it must
 * print its version, start a host on a temp socket, run a command in a pane
 * and read its output back (proving the worker and node-pty are embedded).
 *
 * @module
 */
import { HOST_V8_FLAGS } from "../src/paths.ts";
import { Failure, fromCaller, parseOptions, ROOT, runScript } from "./_script.ts";

/** Every verb module (src/verbs/*.ts without tests). */
function verbModules(): string[] {
  const dir = `${ROOT}src/verbs/`;
  return [...Deno.readDirSync(dir)]
    .filter((e) => e.isFile && e.name.endsWith(".ts") && !e.name.endsWith("_test.ts"))
    .map((e) => `${dir}${e.name}`)
    .sort();
}
const DENO = Deno.execPath();
const DENO_VERSION = Deno.version.deno;

/** Targets paneflow ships for (PTYs and Unix sockets: no Windows). */
const TARGETS: Record<string, { os: "linux" | "darwin"; arch: "x86_64" | "aarch64" }> = {
  "x86_64-unknown-linux-gnu": { os: "linux", arch: "x86_64" },
  "aarch64-unknown-linux-gnu": { os: "linux", arch: "aarch64" },
  "x86_64-apple-darwin": { os: "darwin", arch: "x86_64" },
  "aarch64-apple-darwin": { os: "darwin", arch: "aarch64" },
};

/** The names the binary answers to besides `paneflow` (see main.ts). */
const ALIASES = ["paneflow-mcp", "paneflow-ai-hook"];

const USAGE = `Usage: deno task compile [--target <triple>] [--output <file>] [--release] [--no-smoke]

Builds dist/paneflow with deno compile and links paneflow-mcp and
paneflow-ai-hook to it.

Options:
  --target <triple>  ${Object.keys(TARGETS).join(", ")}
                     (default: this machine, ${Deno.build.target})
  --output <file>    Where to write the binary (default: dist/paneflow;
                     with --release: dist/paneflow-<os>-<arch>)
  --release          Write the release asset dist/paneflow-<os>-<arch> and its
                     .sha256 (what install.sh downloads) instead of the symlinks
  --no-smoke         Skip running the new binary after a build for this machine
  -h, --help         Show this help

Environment:
  DENORT_BIN         Path to the unzipped denort executable of Deno ${DENO_VERSION} for
                     the target, used instead of downloading it from dl.deno.land`;

function denortUrl(target: string): string {
  return `https://dl.deno.land/release/v${DENO_VERSION}/denort-${target}.zip`;
}

/** What kind of executable `bytes` starts; null when it is none we know. */
export function executableKind(bytes: Uint8Array): { os: string; arch: string } | string | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 3 && bytes[3] === 4) {
    return "a zip archive";
  }
  if (
    bytes.length >= 20 && bytes[0] === 0x7f && bytes[1] === 0x45 && bytes[2] === 0x4c && bytes[3] === 0x46
  ) {
    const little = bytes[5] === 1;
    const machine = view.getUint16(18, little);
    const arch = machine === 0x3e
      ? "x86_64"
      : machine === 0xb7
      ? "aarch64"
      : `ELF machine 0x${machine.toString(16)}`;
    return { os: "linux", arch };
  }
  if (bytes.length >= 8) {
    const magic = view.getUint32(0, true);
    if (magic === 0xfeedfacf) {
      const cpu = view.getUint32(4, true);
      const arch = cpu === 0x01000007
        ? "x86_64"
        : cpu === 0x0100000c
        ? "aarch64"
        : `Mach-O cpu 0x${cpu.toString(16)}`;
      return { os: "darwin", arch };
    }
    if (magic === 0xbebafeca) return { os: "darwin", arch: "universal" };
  }
  if (bytes.length >= 2 && bytes[0] === 0x4d && bytes[1] === 0x5a) return { os: "windows", arch: "?" };
  return null;
}

/** Checks that `DENORT_BIN` names a runtime for `target`; returns a description. */
async function checkDenortBin(path: string, target: string): Promise<string> {
  const hint = `DENORT_BIN must be the unzipped denort executable of Deno ${DENO_VERSION} ` +
    `for ${target} (from ${denortUrl(target)})`;
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch {
    throw new Failure(`DENORT_BIN=${path} does not exist. ${hint}.`);
  }
  if (!info.isFile) throw new Failure(`DENORT_BIN=${path} is not a file. ${hint}.`);
  const file = await Deno.open(path);
  const head = new Uint8Array(64);
  let n: number | null;
  try {
    n = await file.read(head);
  } finally {
    file.close();
  }
  const kind = executableKind(head.subarray(0, n ?? 0));
  if (kind === "a zip archive") {
    throw new Failure(
      `DENORT_BIN=${path} is a zip archive; unzip it and point DENORT_BIN at the denort inside.`,
    );
  }
  if (kind === null || typeof kind === "string") {
    throw new Failure(`DENORT_BIN=${path} is not an executable. ${hint}.`);
  }
  const want = TARGETS[target];
  if ((kind.os !== want.os) || (kind.arch !== want.arch && kind.arch !== "universal")) {
    throw new Failure(
      `DENORT_BIN=${path} is a ${kind.os} ${kind.arch} executable, but the target is ${target}. ${hint}.`,
    );
  }
  return `${path} (${kind.os} ${kind.arch}, ${(info.size / 1e6).toFixed(1)} MB)`;
}

/** Where `deno compile` caches denort zips (`$DENO_DIR/dl/...`), if we can tell. */
async function cachedDenort(target: string): Promise<string | null> {
  let denoDir = Deno.env.get("DENO_DIR");
  if (!denoDir) {
    const out = await new Deno.Command(DENO, { args: ["info", "--json"], stdout: "piped", stderr: "null" })
      .output();
    try {
      denoDir = JSON.parse(new TextDecoder().decode(out.stdout)).denoDir as string;
    } catch {
      return null;
    }
  }
  const zip = `${denoDir}/dl/release/v${DENO_VERSION}/denort-${target}.zip`;
  try {
    return (await Deno.stat(zip)).isFile ? zip : null;
  } catch {
    return null;
  }
}

/** Runs `deno compile`, streaming its output; returns its exit code and stderr. */
async function denoCompile(args: string[]): Promise<{ code: number; stderr: string }> {
  const child = new Deno.Command(DENO, {
    args: ["compile", ...args],
    cwd: ROOT,
    // DENORT_BIN (and DENO_DIR, proxies, ...) pass through unchanged.
    env: Deno.env.toObject(),
    stdin: "null",
    stdout: "inherit",
    stderr: "piped",
  }).spawn();
  const dec = new TextDecoder();
  let stderr = "";
  for await (const chunk of child.stderr) {
    await Deno.stderr.write(chunk);
    stderr += dec.decode(chunk, { stream: true });
  }
  const { code } = await child.status;
  return { code, stderr };
}

async function sha256(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function run(bin: string, args: string[], env: Record<string, string>, timeoutMs = 20_000) {
  const out = await new Deno.Command(bin, {
    args,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(timeoutMs),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/**
 * Runs the new binary the way a user would: version, then a host on a temp
 * socket with one pane whose output must come back through `read`.
 */
// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

async function smokeTest(bin: string): Promise<void> {
  const version = await run(bin, ["version"], { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" });
  if (version.code !== 0 || !/^paneflow \d/.test(version.stdout)) {
    throw new Failure(
      `The compiled binary does not run as paneflow ("${bin} version" exited ${version.code}: ` +
        `${(version.stdout + version.stderr).replace(ANSI, "").trim().split("\n")[0]}). ` +
        `Is DENORT_BIN the denort of Deno ${DENO_VERSION} (not deno itself)?`,
    );
  }
  const dir = await Deno.makeTempDir({ prefix: "paneflow-smoke-" });
  const env = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: dir,
    // system.shutdown, at the end, is gated like keystrokes.
    PANEFLOW_IPC_SCRIPTING: "1",
    PANEFLOW_SOCKET_PATH: `${dir}/s.sock`,
    PANEFLOW_CONFIG: `${dir}/config.jsonc`,
  };
  await Deno.writeTextFile(env.PANEFLOW_CONFIG, "{}\n");
  let started = false;
  try {
    const serve = await run(bin, ["serve", "--detach"], env);
    if (serve.code !== 0) throw new Failure(`Smoke test: serve --detach failed: ${serve.stderr.trim()}`);
    started = true;
    const created = await run(bin, ["new", "-c", "echo compiled-$((6*7))-ok; sleep 30"], env);
    if (created.code !== 0) throw new Failure(`Smoke test: new failed: ${created.stderr.trim()}`);
    const deadline = Date.now() + 15_000;
    let last = "";
    while (true) {
      const read = await run(bin, ["read", "1", "--raw"], env);
      last = (read.stdout + read.stderr).trim();
      if (read.code === 0 && read.stdout.includes("compiled-42-ok")) break;
      if (Date.now() > deadline) {
        throw new Failure(`Smoke test: the pane's output never showed; last read: ${last}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    if (started) await run(bin, ["api", "system.shutdown"], env).catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function main(argv: string[]): Promise<void> {
  const values = parseOptions(argv, {
    target: { type: "string" },
    output: { type: "string" },
    release: { type: "boolean", default: false },
    "no-smoke": { type: "boolean", default: false },
  }, USAGE);
  if (!values) return;
  const target = values.target ?? Deno.build.target;
  if (!(target in TARGETS)) {
    throw new Failure(`Unsupported target "${target}"; use one of: ${Object.keys(TARGETS).join(", ")}`, 2);
  }
  const { os, arch } = TARGETS[target];
  const asset = `paneflow-${os}-${arch}`;
  const output = values.output
    ? fromCaller(values.output)
    : `${ROOT}dist/${values.release ? asset : "paneflow"}`;
  const outDir = output.slice(0, output.lastIndexOf("/")) || "/";
  const name = output.slice(output.lastIndexOf("/") + 1);

  const denortBin = Deno.env.get("DENORT_BIN");
  let cached: string | null = null;
  if (denortBin) {
    console.error(`Using DENORT_BIN=${await checkDenortBin(denortBin, target)}`);
  } else {
    cached = await cachedDenort(target);
    console.error(
      cached
        ? `Using the cached runtime ${cached}`
        : `DENORT_BIN is not set and denort is not cached; deno compile will download ${denortUrl(target)}`,
    );
  }

  await Deno.mkdir(outDir, { recursive: true });
  const args = [
    "-A",
    `--config=${ROOT}deno.json`,
    "--include",
    `${ROOT}src/core/pane/worker.ts`,
    "--include",
    `${ROOT}src/core/pane/proc_worker.ts`,
    "--include",
    `${ROOT}src/core/pane/spawn_worker.ts`,
    "--include",
    `${ROOT}src/paneio/queue_worker.ts`,
    // Verb modules are imported through a variable (so a CLI start does not load
    // the heavy ones' npm packages); name them so they are embedded.
    ...verbModules().flatMap((m) => ["--include", m]),
    // A small V8 young generation halves the host's memory per pane (bench/) at ~4% ingest.
    `--v8-flags=${HOST_V8_FLAGS}`,
    "--target",
    target,
    "--output",
    output,
  ];
  if (os === "darwin") args.push("--self-extracting");
  args.push(`${ROOT}main.ts`);
  const compiled = await denoCompile(args);
  if (compiled.code !== 0) {
    if (!denortBin && !cached && /base binary|denort|dl\.deno\.land/i.test(compiled.stderr)) {
      throw new Failure(
        `deno compile could not get the denort runtime for ${target}.\n` +
          `  This machine cannot download ${denortUrl(target)}.\n` +
          `  Fetch that zip where you can, unzip it, and run:\n` +
          `    DENORT_BIN=/path/to/denort deno task compile${values.target ? ` --target ${target}` : ""}`,
      );
    }
    throw new Failure(`deno compile failed (exit ${compiled.code}); see its output above.`);
  }

  if (target === Deno.build.target && !values["no-smoke"]) {
    console.error("Smoke test: version, serve --detach, new, read …");
    try {
      await smokeTest(output);
    } catch (e) {
      await Deno.remove(output).catch(() => {});
      throw e instanceof Failure ? new Failure(`${e.message}\n(removed ${output})`) : e;
    }
    console.error("Smoke test passed.");
  }

  const sum = await sha256(output);
  const size = `${((await Deno.stat(output)).size / 1e6).toFixed(1)} MB`;
  if (values.release) {
    await Deno.writeTextFile(`${output}.sha256`, `${sum}  ${name}\n`);
    console.log(`Built ${output} (${size}, ${target})\n  ${output}.sha256: ${sum}`);
    return;
  }
  for (const alias of ALIASES) {
    const link = `${outDir}/${alias}`;
    await Deno.remove(link).catch(() => {});
    await Deno.symlink(name, link);
  }
  console.log(
    `Built ${output} (${size}, ${target}, sha256 ${sum})\n` +
      ALIASES.map((a) => `  ${outDir}/${a} -> ${name}`).join("\n"),
  );
}

if (import.meta.main) await runScript("compile", main);
