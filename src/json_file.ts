/**
 * Safe edits of a user's JSON config file: never over an unparseable file,
 * a `.bak` backup of the previous version, and an atomic replace.
 *
 * @module
 */
import { CliFailure } from "./errors.ts";
import { dirname } from "./paths.ts";

/** Reads a JSON object file; a missing file is `{}`; anything unparseable is refused. */
export async function readJsonObject(
  path: string,
): Promise<{ data: Record<string, unknown>; exists: boolean }> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { data: {}, exists: false };
    throw new CliFailure(`Cannot read ${path}: ${(e as Error).message}`);
  }
  if (!text.trim()) return { data: {}, exists: true };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new CliFailure(
      `Refusing to edit ${path}: it is not valid JSON (${(e as Error).message}); fix it first`,
    );
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) {
    throw new CliFailure(`Refusing to edit ${path}: it is not a JSON object`);
  }
  return { data: data as Record<string, unknown>, exists: true };
}

/** Writes `text` to `path` atomically, after copying the old file to `path.bak`. */
export async function writeAtomic(path: string, text: string, opts: { backup: boolean }): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  if (opts.backup) {
    try {
      await Deno.copyFile(path, `${path}.bak`);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  let mode = 0o600;
  try {
    mode = (await Deno.stat(path)).mode! & 0o777;
  } catch { /* new file */ }
  const tmp = `${path}.paneflow-${Deno.pid}.tmp`;
  await Deno.writeTextFile(tmp, text, { mode });
  await Deno.rename(tmp, path);
}
