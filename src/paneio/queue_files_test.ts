/**
 * The queue worker's files (./queue_files.ts), in process and without a
 * watcher's timing: a queue file replaced (renamed over, as an editor saves)
 * or rewritten in place while it is read is read again, and what the host is
 * told holds every message of the new version exactly once; the host's own
 * update of a message is made on the file an editor saved meanwhile, never
 * over it.
 */
import assert from "node:assert/strict";
import { type FileView, type FromWorker, QueueFiles } from "./queue_files.ts";
import { atomicWrite, ensureRoot, type Message, messageYaml, readQueue } from "./store.ts";

const msg = (id: string, content = `echo ${id}`): Message => ({
  id,
  from: "boss",
  to: "worker",
  type: "task",
  status: "pending",
  content,
  timestamp: "2026-11-25T12:00:00Z",
  metadata: {},
});
const stream = (ids: string[]) => ids.map((id) => messageYaml(msg(id))).join("---\n");

/** A QueueFiles on a fresh root, with what it told the host. */
async function world(midRead?: (file: string) => Promise<void>) {
  const root = await Deno.makeTempDir({ prefix: "pfqf-" });
  await ensureRoot(root);
  const out: FromWorker[] = [];
  // No watcher: a file is read when a test says it changed, so where a rewrite lands is certain.
  const files = new QueueFiles(root, (m) => out.push(m), { midRead, watch: false });
  const file = `${root}/queue/boss_to_worker.yaml`;
  /** The host's view of the file, rebuilt from the views as deliver.ts does. */
  const view = () => {
    let list: Message[] = [];
    const byId = new Map<string, Message>();
    for (const m of out) {
      if (m.t !== "file" || m.file !== file) continue;
      const v = m as FileView;
      for (const c of v.changed) byId.set(c.msg.id, c.msg);
      if (v.more) continue;
      list = (v.ids ?? [...list.map((x) => x.id), ...(v.append ?? [])]).map((id) => byId.get(id)!);
    }
    return list;
  };
  return { root, files, file, out, view };
}

Deno.test("queue files: a file renamed over while it is read is read again; nothing lost or doubled", async () => {
  let replaceOnce: (() => Promise<void>) | null = null;
  const w = await world(async () => {
    const r = replaceOnce;
    replaceOnce = null;
    await r?.();
  });
  try {
    await atomicWrite(w.file, stream(["m1", "m2"]));
    // The editor's save lands between the host's open and its read: the host reads the old
    // version whole (it holds the old file open) and must notice that it is not the file any more.
    replaceOnce = async () => {
      await Deno.writeTextFile(`${w.root}/queue/.edit.tmp`, stream(["m1", "m2", "m3"]));
      await Deno.rename(`${w.root}/queue/.edit.tmp`, w.file);
    };
    await w.files.start();
    assert.equal(w.files.replacedReads, 1);
    assert.ok(
      w.out.some((m) =>
        m.t === "log" && /boss_to_worker\.yaml:1: the file was replaced while it was read/.test(m.line)
      ),
    );
    assert.deepEqual(w.view().map((m) => m.id), ["m1", "m2", "m3"]);
    // The stale version was never handed to the host.
    const views = w.out.filter((m) => m.t === "file") as FileView[];
    assert.equal(views.length, 1);
    assert.deepEqual(views[0].ids, ["m1", "m2", "m3"]);

    // Again on a change (as the watcher reports it), replaced twice in a row.
    let left = 2;
    const again = async () => {
      await Deno.writeTextFile(
        `${w.root}/queue/.edit.tmp`,
        stream(["m1", "m2", "m3", "m4", "m5", "m6"].slice(0, 7 - left)),
      );
      await Deno.rename(`${w.root}/queue/.edit.tmp`, w.file);
      if (--left > 0) replaceOnce = again;
    };
    replaceOnce = again;
    await atomicWrite(w.file, stream(["m1", "m2", "m3", "m4"]));
    w.files.touched([w.file]);
    await w.files.whenIdle();
    assert.equal(w.files.replacedReads, 3);
    const ids = w.view().map((m) => m.id);
    assert.equal(new Set(ids).size, ids.length, `doubled: ${ids}`);
    assert.deepEqual(ids, ["m1", "m2", "m3", "m4", "m5", "m6"]);
    assert.deepEqual(ids, (await readQueue(w.file)).messages.map((m) => m.msg.id));
  } finally {
    w.files.stop();
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("queue files: a file rewritten in place while it is read is read again, never used torn", async () => {
  let midRead: (() => Promise<void>) | null = null;
  const w = await world(async () => {
    const r = midRead;
    midRead = null;
    await r?.();
  });
  try {
    await atomicWrite(w.file, stream(["m1"]));
    await w.files.start();
    assert.deepEqual(w.view().map((m) => m.id), ["m1"]);
    // Rewritten in place (truncated and written again, no rename) between the host's open and
    // its read: the host's descriptor sees the new bytes, its version taken at the open does not
    // match them, so what it read is not used.
    const inPlace = async (text: string) => {
      const f = await Deno.open(w.file, { write: true, truncate: true });
      await f.write(new TextEncoder().encode(text));
      f.close();
    };
    await inPlace(stream(["m1", "m2-first"]));
    midRead = () => inPlace(stream(["m1", "m2"]));
    w.files.touched([w.file]);
    await w.files.whenIdle();
    assert.equal(w.files.replacedReads, 1);
    assert.deepEqual(w.view().map((m) => [m.id, m.content]), [["m1", "echo m1"], ["m2", "echo m2"]]);
  } finally {
    w.files.stop();
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("queue files: the host's update keeps what an editor saved meanwhile", async () => {
  const w = await world();
  try {
    await atomicWrite(w.file, stream(["m1"]));
    await w.files.start();
    // The editor saves (m2 added) after the host's update read the file, while it writes its
    // temp file: the update is made again on the editor's version.
    const real = Deno.open;
    let once = true;
    Deno.open = (async (path: string | URL, opts?: Deno.OpenOptions) => {
      if (once && String(path).includes("/.boss_to_worker.yaml.") && String(path).endsWith(".tmp")) {
        once = false;
        await Deno.writeTextFile(`${w.root}/queue/.edit.tmp`, stream(["m1", "m2"]));
        await Deno.rename(`${w.root}/queue/.edit.tmp`, w.file);
      }
      return await real(path, opts);
    }) as typeof Deno.open;
    let updated;
    try {
      updated = await w.files.update({
        file: w.file,
        id: "m1",
        from: ["pending"],
        status: "in_progress",
        metadata: { surface_id: 1 },
      });
    } finally {
      Deno.open = real;
    }
    assert.equal(once, false);
    await w.files.whenIdle();
    assert.equal(updated?.status, "in_progress");
    const now = (await readQueue(w.file)).messages.map((m) => [m.msg.id, m.msg.status]);
    assert.deepEqual(now, [["m1", "in_progress"], ["m2", "pending"]]);
    assert.deepEqual(w.view().map((m) => [m.id, m.status]), now);
  } finally {
    w.files.stop();
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("queue files: a big file crosses in parts; an append sends only what it added", async () => {
  const w = await world();
  try {
    const ids = [...Array(1000).keys()].map((i) => `m${i}`);
    await atomicWrite(w.file, stream(ids));
    await w.files.start();
    const parts = w.out.filter((m) => m.t === "file") as FileView[];
    assert.equal(parts.length, 5);
    assert.ok(parts.slice(0, -1).every((p) => p.more && p.changed.length === 200 && p.ids === null));
    assert.deepEqual(parts.at(-1)!.ids, ids);
    assert.deepEqual(w.view().map((m) => m.id), ids);
    // One more message at the end: only it crosses, and only its id.
    w.out.length = 0;
    await atomicWrite(w.file, `${stream(ids)}---\n${messageYaml(msg("m1000"))}`);
    w.files.touched([w.file]);
    await w.files.whenIdle();
    const [v] = w.out.filter((m) => m.t === "file") as FileView[];
    assert.equal(v.ids, null);
    assert.deepEqual(v.append, ["m1000"]);
    assert.deepEqual(v.changed.map((m) => m.msg.id), ["m1000"]);
  } finally {
    w.files.stop();
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("queue files: an older copy saved right after the host's update shows as a change", async () => {
  const w = await world();
  try {
    const v1 = stream(["m1"]);
    await atomicWrite(w.file, v1);
    await w.files.start();
    // The editor saves its older copy (m1 pending, the very text the host read first) right
    // after the host's update lands, before the host reads the file again.
    const real = Deno.rename;
    let once = true;
    Deno.rename = async (from: string | URL, to: string | URL) => {
      await real(from, to);
      if (once && String(to) === w.file && String(from).includes("/.boss_to_worker.yaml.")) {
        once = false;
        await Deno.writeTextFile(`${w.root}/queue/.edit.tmp`, v1);
        await real(`${w.root}/queue/.edit.tmp`, w.file);
      }
    };
    const before = w.out.length;
    try {
      const done = await w.files.update({
        file: w.file,
        id: "m1",
        from: ["pending", "in_progress"],
        status: "completed",
        metadata: {},
      });
      assert.equal(done?.status, "completed");
      await w.files.whenIdle();
    } finally {
      Deno.rename = real;
    }
    assert.equal(once, false);
    // The host is told m1 is pending again (and so can write its status back).
    const last = w.out.slice(before).filter((m) => m.t === "file").at(-1) as FileView | undefined;
    assert.ok(last, "no view after the update");
    assert.deepEqual(last.changed.map((m) => [m.msg.id, m.msg.status]), [["m1", "pending"]]);
  } finally {
    w.files.stop();
    await Deno.remove(w.root, { recursive: true });
  }
});
