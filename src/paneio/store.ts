/**
 * The queue's files: `queue/<from>_to_<to>.yaml` holding one message (a
 * mapping, the shape docs/paneio.md shows) or several (a YAML
 * multi-document stream), and `status/agents/<name>.yaml`. Parsing reports
 * file:line for every problem; every write is atomic (a temp file in the
 * same directory, fsync, rename, fsync of the directory) and made under an
 * exclusive lock on the file's lock file, so concurrent writers never lose
 * each other's messages.
 *
 * @module
 */
import { type Document, LineCounter, parseAllDocuments, stringify } from "yaml";
import { z } from "zod";
import { nameProblem } from "../spec/workspace.ts";
import { writeSynced } from "../json_file.ts";

/** A file larger than this is not read (a human must look at it). */
export const MAX_FILE_BYTES = 8 * 1024 * 1024;
/** A message's content is at most this long. */
export const MAX_CONTENT_BYTES = 1024 * 1024;

/** Agent names: pane names that are also safe in a file name. */
export const AgentName = z.string().superRefine((n, ctx) => {
  const problem = nameProblem(n);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
  else if (!/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(n)) {
    ctx.addIssue({
      code: "custom",
      message: `"${n}" is not a valid agent name (a letter, then up to 63 letters, digits, _ . or -)`,
    });
  }
});

const Iso8601 = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$/;

/** Message types and statuses (docs/paneio.md). */
export const MessageType = z.enum(["task", "info", "result", "error"]);
export const MessageStatus = z.enum(["pending", "in_progress", "completed", "failed"]);

/** One message, exactly PaneIO's fields (docs/paneio.md). */
export const Message = z.strictObject({
  id: z.string().min(1).max(128).regex(/^[A-Za-z0-9_.:-]+$/, "an id is letters, digits, _ . : or -"),
  from: AgentName,
  to: AgentName,
  type: MessageType,
  status: MessageStatus,
  content: z.string().refine((c) => new TextEncoder().encode(c).length <= MAX_CONTENT_BYTES, {
    message: `content is over ${MAX_CONTENT_BYTES} bytes`,
  }),
  timestamp: z.string().regex(Iso8601, "expected an ISO 8601 timestamp such as 2025-02-02T12:00:00"),
  metadata: z.record(z.string(), z.unknown()).default({}),
});
/** A message. */
export type Message = z.infer<typeof Message>;

/** A message as found in its file. */
export interface Located {
  msg: Message;
  file: string;
  /** Index of its document's chunk in the file, and of the document in the chunk. */
  index: number;
  sub: number;
  line: number;
}

/** A problem in a file, with where. */
export interface FileProblem {
  file: string;
  line: number;
  message: string;
}

/** A stretch of a file from one `---` line to the next (the first from the file's start). */
export interface Chunk {
  text: string;
  start: number;
  /** Its first line (1-based). */
  line: number;
}

/** What a queue file holds. */
export interface Parsed {
  messages: Located[];
  problems: FileProblem[];
  chunks: Chunk[];
}

/** The queue file of a channel. */
export function queueFile(root: string, from: string, to: string): string {
  return `${root}/queue/${from}_to_${to}.yaml`;
}

/** The status file of an agent. */
export function statusFile(root: string, name: string): string {
  return `${root}/status/agents/${name}.yaml`;
}

const base = (p: string) => p.slice(p.lastIndexOf("/") + 1);

function describe(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    return `unknown field "${issue.keys[0]}" (docs/paneio.md lists the fields)`;
  }
  const at = issue.path.length ? `"${issue.path.join(".")}": ` : "";
  return `${at}${issue.message}`;
}

/**
 * Splits a stream at its `---` lines. A `---` at the start of a line is a
 * document marker in YAML except inside a quoted or flow scalar spanning
 * lines, which the parse of the chunks then reports as an error.
 */
export function splitChunks(text: string): Chunk[] {
  const out: Chunk[] = [];
  const re = /^---(?=[ \t]|\r?$)/gm;
  let start = 0;
  let line = 1;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    if (m.index === 0) continue;
    const piece = text.slice(start, m.index);
    out.push({ text: piece, start, line });
    line += countLines(piece);
    start = m.index;
  }
  if (start < text.length) out.push({ text: text.slice(start), start, line });
  return out;
}

function countLines(t: string): number {
  let n = 0;
  for (let i = t.indexOf("\n"); i >= 0; i = t.indexOf("\n", i + 1)) n++;
  return n;
}

type DocResult =
  | { kind: "msg"; msg: Message; line: number }
  | { kind: "problem"; line: number; message: string }
  | { kind: "empty" };

/** Parsed chunks by their text: a file that grows or changes in one place is parsed only there. */
const chunkCache = new Map<string, DocResult[]>();
const CHUNK_CACHE_MAX = 50_000;

function parseChunk(text: string): DocResult[] {
  const hit = chunkCache.get(text);
  if (hit) return hit;
  const lc = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  const lineOf = (offset: number) => lc.linePos(offset).line;
  const out: DocResult[] = [];
  for (const doc of Array.isArray(docs) ? docs : []) {
    const start = doc.range?.[0] ?? 0;
    if (doc.errors.length) {
      const e = doc.errors[0];
      out.push({
        kind: "problem",
        line: lineOf(e.pos[0]),
        message: `invalid YAML: ${e.message.split("\n")[0]}`,
      });
      continue;
    }
    if (doc.contents === null) {
      out.push({ kind: "empty" });
      continue;
    }
    const value = doc.toJS({ maxAliasCount: 0 });
    // An empty document (`---` right after `---`, or only comments) holds no message.
    if (value === null || value === undefined) {
      out.push({ kind: "empty" });
      continue;
    }
    const r = Message.safeParse(value);
    if (!r.success) {
      const issue = r.error.issues[0];
      // deno-lint-ignore no-explicit-any
      let node = issue.path.length ? (doc.getIn(issue.path as any, true) as any) : doc.contents as any;
      if (issue.code === "unrecognized_keys" && node && Array.isArray(node.items)) {
        // deno-lint-ignore no-explicit-any
        const pair = node.items.find((p: any) => p?.key?.value === issue.keys[0]);
        node = pair?.key ?? node;
      }
      const at = node?.range?.[0] ?? (doc.contents as { range?: number[] } | null)?.range?.[0] ?? start;
      out.push({ kind: "problem", line: lineOf(at), message: describe(issue) });
      continue;
    }
    const contentsStart = (doc.contents as { range?: number[] } | null)?.range?.[0] ?? start;
    out.push({ kind: "msg", msg: r.data, line: lineOf(contentsStart) });
  }
  if (chunkCache.size >= CHUNK_CACHE_MAX) chunkCache.clear();
  chunkCache.set(text, out);
  return out;
}

/** Parses a queue file's text; problems carry file:line. */
export function parseQueue(text: string, file: string): Parsed {
  const chunks = splitChunks(text);
  const out: Parsed = { messages: [], problems: [], chunks };
  chunks.forEach((chunk, index) => {
    parseChunk(chunk.text).forEach((d, sub) => {
      const line = d.kind === "empty" ? 0 : chunk.line + d.line - 1;
      if (d.kind === "problem") out.problems.push({ file, line, message: d.message });
      if (d.kind !== "msg") return;
      const msg = d.msg;
      const expected = `${msg.from}_to_${msg.to}.yaml`;
      if (base(file) !== expected) {
        out.problems.push({
          file,
          line,
          message: `a message from "${msg.from}" to "${msg.to}" belongs in queue/${expected}`,
        });
        return;
      }
      out.messages.push({ msg, file, index, sub, line });
    });
  });
  const ids = new Map<string, number>();
  for (const m of out.messages) {
    const seen = ids.get(m.msg.id);
    if (seen !== undefined) {
      out.problems.push({
        file,
        line: m.line,
        message: `id "${m.msg.id}" is used twice in this file (line ${seen})`,
      });
    }
    ids.set(m.msg.id, m.line);
  }
  return out;
}

/** Which version of a file was read: its inode, size and modification time. */
export interface Version {
  ino: number | null;
  size: number;
  mtime: number;
}

/** The version a stat describes. */
export function versionOf(info: Deno.FileInfo): Version {
  return { ino: info.ino, size: info.size, mtime: info.mtime?.getTime() ?? 0 };
}

/** Whether two versions are the same. */
export function sameVersion(a: Version | null, b: Version | null): boolean {
  return !!a && !!b && a.ino === b.ino && a.size === b.size && a.mtime === b.mtime;
}

/** What {@link readQueue} gives: the parse, the text, and the version the text is of. */
export type ReadResult = Parsed & {
  text: string | null;
  /** The version read (null when the file is missing or was not read). */
  version: Version | null;
  /** The file changed while it was read (written in place): the text may be torn; read it again. */
  torn?: boolean;
};

/**
 * Reads and parses a queue file; a missing file is empty. The file is
 * opened once and its version taken from that descriptor, so the text is
 * exactly the version returned even when the path is replaced (renamed
 * over) meanwhile; a file written in place during the read is `torn`.
 * `midRead` (tests) runs between the open and the read.
 */
export async function readQueue(
  file: string,
  opts: { midRead?: () => Promise<void> } = {},
): Promise<ReadResult> {
  const none = (message?: string): ReadResult => ({
    messages: [],
    problems: message ? [{ file, line: 1, message }] : [],
    chunks: [],
    text: null,
    version: null,
  });
  let f: Deno.FsFile;
  try {
    // Not opened unless regular (opening a FIFO would block).
    if (!(await Deno.stat(file)).isFile) return none("not a regular file");
    f = await Deno.open(file, { read: true });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return none();
    return none(`cannot read: ${(e as Error).message}`);
  }
  let bytes: Uint8Array;
  let version: Version;
  try {
    const info = await f.stat();
    if (!info.isFile) return none("not a regular file");
    version = versionOf(info);
    if (info.size > MAX_FILE_BYTES) {
      return { ...none(`file is ${info.size} bytes; the limit is ${MAX_FILE_BYTES}`), version };
    }
    await opts.midRead?.();
    const parts: Uint8Array[] = [];
    let total = 0;
    const buf = new Uint8Array(Math.max(4096, Math.min(info.size + 1, MAX_FILE_BYTES + 1)));
    while (true) {
      const n = await f.read(buf);
      if (n === null) break;
      parts.push(buf.slice(0, n));
      total += n;
      if (total > MAX_FILE_BYTES) break;
    }
    bytes = new Uint8Array(total);
    let off = 0;
    for (const p of parts) {
      bytes.set(p, off);
      off += p.length;
    }
    const after = versionOf(await f.stat());
    if (!sameVersion(after, version) || total !== version.size) {
      return { ...none("the file changed while it was read"), version: after, torn: true };
    }
  } catch (e) {
    return none(`cannot read: ${(e as Error).message}`);
  } finally {
    f.close();
  }
  if (bytes.length > MAX_FILE_BYTES) {
    return { ...none(`file is ${bytes.length} bytes; the limit is ${MAX_FILE_BYTES}`), version };
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { ...none("not valid UTF-8"), version };
  }
  return { ...parseQueue(text, file), text, version };
}

/**
 * Writes `text` to `file` atomically: temp file beside it, fsync, rename,
 * fsync of the directory. With `unless`, checked just before the rename:
 * when it says so, nothing is written and the result is false.
 */
export async function atomicWrite(
  file: string,
  text: string,
  unless?: () => Promise<boolean>,
): Promise<boolean> {
  const dir = file.slice(0, file.lastIndexOf("/"));
  const tmp = `${dir}/.${base(file)}.${Deno.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await writeSynced(tmp, text, 0o644);
  if (unless && await unless()) {
    await Deno.remove(tmp).catch(() => {});
    return false;
  }
  await Deno.rename(tmp, file);
  try {
    const d = await Deno.open(dir, { read: true });
    try {
      await d.sync();
    } finally {
      d.close();
    }
  } catch { /* a directory fsync is not supported everywhere */ }
  return true;
}

/** Runs `fn` holding the exclusive lock of `file` (its `.<name>.lock` beside it). */
export async function withLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const dir = file.slice(0, file.lastIndexOf("/"));
  const lock = await Deno.open(`${dir}/.${base(file)}.lock`, { write: true, create: true, mode: 0o644 });
  try {
    await lock.lock(true);
    return await fn();
  } finally {
    lock.close();
  }
}

/** Makes `queue/` and `status/agents/` under a root. */
export async function ensureRoot(root: string): Promise<void> {
  await Deno.mkdir(`${root}/queue`, { recursive: true });
  await Deno.mkdir(`${root}/status/agents`, { recursive: true });
}

/** One message as a YAML mapping (PaneIO's field order, docs/paneio.md). */
export function messageYaml(msg: Message): string {
  return stringify({
    id: msg.id,
    from: msg.from,
    to: msg.to,
    type: msg.type,
    status: msg.status,
    content: msg.content,
    timestamp: msg.timestamp,
    metadata: msg.metadata,
  }, { lineWidth: 0 });
}

/** A new message id, shaped as PaneIO's (`msg-` and 8 hex digits, here 12). */
export function newId(): string {
  return `msg-${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
}

/**
 * Appends a message to its channel's file under the lock: the file's text
 * is kept as it is and the message follows as one more document.
 */
export async function appendMessage(root: string, msg: Message): Promise<string> {
  const parsed = Message.parse(msg);
  const file = queueFile(root, parsed.from, parsed.to);
  await withLock(file, async () => {
    let text = "";
    try {
      text = await Deno.readTextFile(file);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    const doc = messageYaml(parsed);
    const next = text.trim() === "" ? doc : `${text.endsWith("\n") ? text : text + "\n"}---\n${doc}`;
    await atomicWrite(file, next);
  });
  return file;
}

/** A chunk with one document changed: its status and metadata entries set, the rest kept. */
function editChunk(
  chunk: string,
  sub: number,
  delta: { status?: Message["status"]; metadata?: Record<string, unknown> },
): string {
  const docs = parseAllDocuments(chunk) as Document.Parsed[];
  const doc = docs[sub];
  if (delta.status) doc.set("status", delta.status);
  for (const [k, v] of Object.entries(delta.metadata ?? {})) {
    if (!doc.has("metadata") || doc.get("metadata") === null) doc.set("metadata", doc.createNode({}));
    doc.setIn(["metadata", k], doc.createNode(v));
  }
  const text = docs.map((d, i) => {
    let t = String(d);
    if (i > 0 && !t.startsWith("---")) t = `---\n${t}`;
    return t.endsWith("\n") ? t : t + "\n";
  }).join("");
  // The marker this chunk started with stays (String() drops a bare `---` line's comments only).
  return chunk.startsWith("---") && !text.startsWith("---") ? `---\n${text}` : text;
}

/**
 * Changes one message in place under the file's lock: `change` gets the
 * message as it is now and returns its new status and metadata fields, or
 * null to leave it. Only that message's document is rewritten; the others,
 * their comments and order stay byte for byte. Returns the message after the
 * change (as the file now holds it), or null when it was left (or is gone,
 * or the file has a problem). A writer that does not take the lock (an
 * editor saving the file) and replaces the file between this read and this
 * write is not overwritten: the change is made again on its version.
 */
export async function updateMessage(
  file: string,
  id: string,
  change: (msg: Message) => { status?: Message["status"]; metadata?: Record<string, unknown> } | null,
): Promise<Message | null> {
  return await withLock(file, async () => {
    for (let attempt = 0;; attempt++) {
      const cur = await readQueue(file);
      if (cur.torn && attempt < 20) continue;
      if (cur.text === null || cur.problems.length) return null;
      const found = cur.messages.find((m) => m.msg.id === id);
      if (!found) return null;
      const delta = change(found.msg);
      if (!delta) return null;
      const chunk = cur.chunks[found.index];
      const edited = editChunk(chunk.text, found.sub, delta);
      const replaced = async () => attempt < 20 && !sameVersion(await currentVersion(file), cur.version);
      const wrote = await atomicWrite(
        file,
        cur.text.slice(0, chunk.start) + edited + cur.text.slice(chunk.start + chunk.text.length),
        replaced,
      );
      if (!wrote) continue;
      return {
        ...found.msg,
        status: delta.status ?? found.msg.status,
        metadata: { ...found.msg.metadata, ...delta.metadata },
      };
    }
  });
}

/** The version of the file at a path now, or null when there is none. */
export async function currentVersion(file: string): Promise<Version | null> {
  try {
    return versionOf(await Deno.stat(file));
  } catch {
    return null;
  }
}

/**
 * Removes finished messages (completed or failed) that `drop` accepts from
 * a file, under its lock; an emptied file is deleted. Returns how many went.
 */
export async function pruneFile(file: string, drop: (msg: Message) => boolean): Promise<number> {
  return await withLock(file, async () => {
    const cur = await readQueue(file);
    if (cur.text === null || cur.problems.length) return 0;
    const byChunk = new Map<number, Located[]>();
    for (const m of cur.messages) byChunk.set(m.index, [...byChunk.get(m.index) ?? [], m]);
    let gone = 0;
    const kept: string[] = [];
    cur.chunks.forEach((c, i) => {
      const ms = byChunk.get(i) ?? [];
      const finished = ms.length > 0 &&
        ms.every((m) => (m.msg.status === "completed" || m.msg.status === "failed") && drop(m.msg));
      if (finished) gone += ms.length;
      else if (ms.length) kept.push(c.text);
    });
    if (!gone) return 0;
    if (!kept.length) await Deno.remove(file);
    else {
      // The first chunk left may carry a `---`: harmless, a stream may start with one.
      await atomicWrite(file, kept.map((t) => (t.endsWith("\n") ? t : t + "\n")).join(""));
    }
    return gone;
  });
}

/** The queue files under a root (`*.yaml` in queue/, no dot files), sorted. */
export async function queueFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(`${root}/queue`)) {
      if (e.isFile && e.name.endsWith(".yaml") && !e.name.startsWith(".")) {
        out.push(`${root}/queue/${e.name}`);
      }
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return out.sort();
}

/** An agent's status file (docs/paneio.md). */
export const AgentStatus = z.strictObject({
  agent_name: AgentName,
  state: z.enum(["idle", "working", "completed", "error"]),
  current_task: z.string().nullable(),
  last_updated: z.string(),
  statistics: z.record(z.string(), z.number()),
});
/** An agent's status. */
export type AgentStatus = z.infer<typeof AgentStatus>;

/** Renders a status file. */
export function statusYaml(s: AgentStatus): string {
  return stringify(s, { lineWidth: 0 });
}

/** Reads every status file under a root; bad ones are problems. */
export async function readStatuses(
  root: string,
): Promise<{ agents: AgentStatus[]; problems: FileProblem[] }> {
  const agents: AgentStatus[] = [];
  const problems: FileProblem[] = [];
  const dir = `${root}/status/agents`;
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && e.name.endsWith(".yaml") && !e.name.startsWith(".")) names.push(e.name);
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  for (const name of names.sort()) {
    const file = `${dir}/${name}`;
    try {
      const lc = new LineCounter();
      const doc = parseAllDocuments(await Deno.readTextFile(file), { lineCounter: lc });
      const d = Array.isArray(doc) ? doc[0] : null;
      if (!d) continue;
      if (d.errors.length) {
        problems.push({
          file,
          line: lc.linePos(d.errors[0].pos[0]).line,
          message: d.errors[0].message.split("\n")[0],
        });
        continue;
      }
      const r = AgentStatus.safeParse(d.toJS());
      if (r.success) agents.push(r.data);
      else problems.push({ file, line: 1, message: describe(r.error.issues[0]) });
    } catch (e) {
      problems.push({ file, line: 1, message: (e as Error).message });
    }
  }
  return { agents, problems };
}
