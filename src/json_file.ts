/**
 * Safe edits of a user's JSON config file: never over an unparseable file,
 * a `.bak` backup of the previous version, and an atomic replace.
 *
 * @module
 */
import { CliFailure } from "./errors.ts";
import { dirname } from "./paths.ts";

/** Reads a config file as text; a missing file is `""` and `exists: false`; another failure is one line. */
export async function readConfigText(path: string): Promise<{ text: string; exists: boolean }> {
  try {
    return { text: await Deno.readTextFile(path), exists: true };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { text: "", exists: false };
    throw new CliFailure(`Cannot read ${path}: ${(e as Error).message}`, undefined, { cause: e });
  }
}

/** Reads a JSON object file; a missing file is `{}`; anything unparseable is refused. */
export async function readJsonObject(
  path: string,
): Promise<{ data: Record<string, unknown>; exists: boolean }> {
  const { text, exists } = await readConfigText(path);
  if (!exists) return { data: {}, exists: false };
  if (!text.trim()) return { data: {}, exists: true };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new CliFailure(
      `Refusing to edit ${path}: it is not valid JSON (${(e as Error).message}); fix it first`,
      undefined,
      { cause: e },
    );
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) {
    throw new CliFailure(`Refusing to edit ${path}: it is not a JSON object`);
  }
  return { data: data as Record<string, unknown>, exists: true };
}

/**
 * Replaces `path` with `text` atomically: a temp file in the same directory,
 * then a rename, after copying the old file to `path.bak` when `backup`. A
 * symlinked config stays a symlink (its target is written) and the file
 * keeps its mode (0600 for a new one).
 */
export async function writeAtomic(path: string, text: string, opts: { backup: boolean }): Promise<void> {
  let target = path;
  try {
    target = await Deno.realPath(path);
  } catch { /* a new file */ }
  await Deno.mkdir(dirname(target), { recursive: true });
  if (opts.backup) {
    try {
      await Deno.copyFile(target, `${path}.bak`);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  const mode = await Deno.stat(target).then((s) => (s.mode ?? 0o600) & 0o777, () => 0o600);
  const tmp = `${dirname(target)}/.${
    target.slice(target.lastIndexOf("/") + 1)
  }.paneflow-${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(tmp, text, { mode, createNew: true });
    await Deno.chmod(tmp, mode);
    await Deno.rename(tmp, target);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}

/**
 * Writes `text` to a new file `tmp` (which must not exist) and flushes it to
 * the disk before returning, so a rename of `tmp` over the real file can
 * never leave a torn one after a crash; on a failure `tmp` is removed.
 */
export async function writeSynced(tmp: string, text: string, mode: number): Promise<void> {
  const file = await Deno.open(tmp, { write: true, createNew: true, mode });
  try {
    const data = new TextEncoder().encode(text);
    let written = 0;
    while (written < data.length) written += await file.write(data.subarray(written));
    await file.sync();
  } catch (e) {
    file.close();
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  file.close();
}
