/**
 * Installs a pinned agent CLI from npm into the test cache once (a lock dir
 * keeps parallel test processes from installing at the same time), shared
 * by tests/_codex.ts and tests/_gemini.ts.
 *
 * @module
 */

/** The test cache: `$PANEFLOW_TEST_CACHE` or `~/.cache/paneflow-test`. */
export function testCacheDir(): string {
  return Deno.env.get("PANEFLOW_TEST_CACHE") ??
    `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache`}/paneflow-test`;
}

/** `bin --version` output, or null when it does not run. */
export async function versionOf(bin: string[], env: Record<string, string> = {}): Promise<string | null> {
  try {
    const out = await new Deno.Command(bin[0], {
      args: [...bin.slice(1), "--version"],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      env,
    }).output();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
  } catch {
    return null;
  }
}

/**
 * `npm install <spec>` into `dir` unless `find(dir)` already gives a working
 * binary; returns what `find` gives afterwards.
 */
export async function ensureNpmInstall(
  dir: string,
  spec: string,
  find: (dir: string) => Promise<string | null>,
): Promise<string> {
  const found = await find(dir);
  if (found) return found;
  await Deno.mkdir(dir, { recursive: true });
  const lock = `${dir}.lock`;
  const deadline = Date.now() + 240_000;
  while (true) {
    try {
      await Deno.mkdir(lock);
      break;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      const again = await find(dir);
      if (again) return again;
      const age = Date.now() - (await Deno.stat(lock).then((s) => s.mtime?.getTime() ?? 0, () => 0));
      if (age > 300_000) await Deno.remove(lock, { recursive: true }).catch(() => {});
      if (Date.now() > deadline) throw new Error(`Timed out waiting for another install (${lock})`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    const out = await new Deno.Command("npm", {
      args: ["install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error", spec],
      cwd: dir,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const bin = await find(dir);
    if (!bin) {
      const dec = new TextDecoder();
      throw new Error(
        `npm install ${spec} into ${dir} gave no working binary (exit ${out.code}):\n` +
          dec.decode(out.stdout) + dec.decode(out.stderr),
      );
    }
    return bin;
  } finally {
    await Deno.remove(lock, { recursive: true }).catch(() => {});
  }
}

/** Quotes one word for `sh -c` (the product's one `shQuote`). */
export { shQuote } from "../src/sh.ts";

/**
 * `bin` once `check` has passed for this install: the first call runs
 * `check` (e.g. `--version`, which takes Gemini CLI half a minute on a loaded
 * machine) and leaves a marker; later calls only compare the installed
 * package.json's version, so each test file does not pay for it again.
 */
export async function verifiedOnce(
  dir: string,
  pkg: string,
  version: string,
  bin: string,
  check: () => Promise<boolean>,
): Promise<string | null> {
  try {
    const manifest = JSON.parse(await Deno.readTextFile(`${dir}/node_modules/${pkg}/package.json`));
    if (manifest.version !== version) return null;
    await Deno.stat(bin);
  } catch {
    return null;
  }
  const marker = `${dir}/.paneflow-verified-${version}`;
  try {
    if ((await Deno.readTextFile(marker)) === bin) return bin;
  } catch { /* not verified yet */ }
  if (!(await check())) return null;
  await Deno.writeTextFile(marker, bin);
  return bin;
}
