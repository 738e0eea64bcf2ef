/**
 * The journal on disk: where it lives (one per socket, in a state directory
 * that survives a reboot), how it is written (a temp file, fsync, rename,
 * all with async calls that run off the host's event loop) and how it is
 * read back (validated; a torn or foreign journal is set aside and reported,
 * never fatal). docs/restore.md.
 *
 * @module
 */
import { Journal, JOURNAL_VERSION } from "../spec/restore.ts";
import type { Env } from "../paths.ts";
import { writeSynced } from "../json_file.ts";

/** `$XDG_STATE_HOME/paneflow`, else `~/.local/state/paneflow`. */
export function stateDir(env: Env = Deno.env): string {
  const xdg = env.get("XDG_STATE_HOME");
  return `${xdg || `${env.get("HOME") ?? "/tmp"}/.local/state`}/paneflow`;
}

/** FNV-1a, 52 bits, in hex: a short stable name for a socket path. */
function pathHash(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(text)) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return (h >> 12n).toString(16).padStart(13, "0");
}

/** The journal files of one socket: the live one, and the previous host's while it waits to be restored. */
export interface JournalPaths {
  dir: string;
  /** What this host writes. */
  live: string;
  /** The last host's journal, moved aside at start until it is restored. */
  previous: string;
  /** History files: `<history>/<surface_id>.txt` (live) and `.previous/` beside it. */
  history: string;
  previousHistory: string;
}

/** Where the journal of the host on `socketPath` lives. */
export function journalPaths(socketPath: string, env: Env = Deno.env): JournalPaths {
  const base = socketPath.slice(socketPath.lastIndexOf("/") + 1).replace(/\.sock$/, "").replace(
    /[^\w.-]/g,
    "_",
  );
  const dir = `${stateDir(env)}/journals`;
  const stem = `${dir}/${base || "host"}-${pathHash(socketPath)}`;
  return {
    dir,
    live: `${stem}.json`,
    previous: `${stem}.previous.json`,
    history: `${stem}.history`,
    previousHistory: `${stem}.previous.history`,
  };
}

/** Writes `text` to `path` atomically and durably: temp file, fsync, rename, fsync of the directory. */
export async function writeDurable(path: string, text: string): Promise<void> {
  const dir = path.slice(0, path.lastIndexOf("/"));
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await writeSynced(tmp, text, 0o600);
  try {
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  // The rename itself survives a power cut once the directory is synced.
  try {
    const d = await Deno.open(dir, { read: true });
    try {
      await d.sync();
    } finally {
      d.close();
    }
  } catch { /* some file systems cannot sync a directory */ }
}

/** What reading a journal gave: the journal, nothing, or a problem (the file was set aside). */
export type ReadOutcome =
  | { journal: Journal; problem: null }
  | { journal: null; problem: null }
  | { journal: null; problem: string };

/**
 * Reads and validates a journal. A file that is not a journal of this
 * version is renamed to `<path>.bad-<time>` and named in the problem.
 */
export async function readJournal(path: string): Promise<ReadOutcome> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { journal: null, problem: null };
    return { journal: null, problem: `Cannot read the journal "${path}": ${(e as Error).message}` };
  }
  let why: string;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    data = undefined;
    why = `it is not JSON (${(e as Error).message}; a torn write?)`;
  }
  if (data !== undefined) {
    const version = (data as { version?: unknown })?.version;
    if (version !== JOURNAL_VERSION) {
      why = `it is of format version ${
        JSON.stringify(version ?? null)
      }, this paneflow reads ${JOURNAL_VERSION}`;
    } else {
      const parsed = Journal.safeParse(data);
      if (parsed.success) return { journal: parsed.data, problem: null };
      const issue = parsed.error.issues[0];
      why = `"${issue.path.join(".")}": ${issue.message}`;
    }
  }
  const aside = await freeName(`${path}.bad-${Date.now()}`);
  await Deno.rename(path, aside).catch(() => {});
  return { journal: null, problem: `The journal "${path}" was set aside as "${aside}": ${why!}` };
}

/** `base`, or `base-2`, `base-3`, ... when a file of that name is there already (two set aside in one ms). */
async function freeName(base: string): Promise<string> {
  for (let n = 1;; n++) {
    const name = n === 1 ? base : `${base}-${n}`;
    if (!(await Deno.lstat(name).then(() => true, () => false))) return name;
  }
}

/**
 * The working directories of the panes a journal of this socket would bring
 * back (the live one, else the one waiting), without validating or moving
 * anything: what `up`'s orphan pruning leaves alone when the host restores
 * at start.
 */
export async function journaledDirs(socketPath: string, env: Env = Deno.env): Promise<string[]> {
  const paths = journalPaths(socketPath, env);
  for (const file of [paths.live, paths.previous]) {
    try {
      const data = JSON.parse(await Deno.readTextFile(file));
      const dirs: string[] = [];
      for (const w of data?.workspaces ?? []) {
        for (const p of w?.panes ?? []) {
          if (typeof p?.cwd === "string") dirs.push(p.cwd);
          if (typeof p?.up?.worktree === "string") dirs.push(p.up.worktree);
        }
      }
      if (dirs.length) return dirs;
    } catch { /* none, or unreadable: Restorer.start reports it */ }
  }
  return [];
}
