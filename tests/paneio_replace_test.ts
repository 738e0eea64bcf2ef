/**
 * Queue files written over while the host works on them ("a file replaced
 * mid-read"): an editor saving the file again and again (temp file
 * and rename, as docs/paneio.md asks) while the host reads it and delivers
 * from it loses and doubles nothing; a stale save that puts back an older
 * copy of a delivered message does not deliver it again, and the host writes
 * its status back; a message whose turn ends while its file is broken gets
 * its end written once the file is fixed.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { waitUntil, withHost } from "./_harness.ts";
import { messageYaml, newId, withLock } from "../src/paneio/store.ts";

type Msg = { id: string; status: string; content: string; metadata: Record<string, unknown> };

async function read(file: string): Promise<Msg[]> {
  const text = await Deno.readTextFile(file).catch(() => "");
  return (parseAllDocuments(text) as { toJS(): Msg | null }[]).map((d) => d.toJS()).filter((m): m is Msg =>
    m !== null
  );
}

const message = (content: string) =>
  messageYaml({
    id: newId(),
    from: "editor",
    to: "ed",
    type: "task",
    status: "pending",
    content,
    timestamp: new Date().toISOString(),
    metadata: {},
  });

/** Saves `text` over `file` as an editor does: a temp file beside it, then a rename. */
async function save(file: string, text: string) {
  const tmp = `${file.slice(0, file.lastIndexOf("/"))}/.editor-save.tmp`;
  await Deno.writeTextFile(tmp, text);
  await Deno.rename(tmp, file);
}

Deno.test("queue files written over while the host reads and delivers them", async (t) => {
  const root = await Deno.makeTempDir({ prefix: "pfq-" });
  const work = await Deno.makeTempDir({ prefix: "pfw-" });
  const file = `${root}/queue/editor_to_ed.yaml`;
  try {
    await withHost({ config: JSON.stringify({ queue: { root } }) }, async (host) => {
      await host.json(["new", "--pane-name", "ed", "--cwd", work, "-c", "PS1='$ ' exec sh"]);
      await waitUntil("ed ready", async () => (await host.cli(["ready", "ed"])).code === 0, {
        timeoutMs: 15_000,
      });

      await t.step("saved again and again while read: each message delivered once, in order", async () => {
        // A big comment makes each read of the file long enough for saves to land in it.
        const head = `# ${"padding ".repeat(150_000)}\n`;
        let n = 0;
        const replacedReads = () =>
          (host.log().match(/editor_to_ed\.yaml:1: the file was replaced while it/g) ?? []).length;
        // Each save adds one message to what the file holds now (the host's status changes
        // included): a careful editor, holding the writers' lock for its read-modify-write.
        while (n < 20 || (replacedReads() === 0 && n < 300)) {
          await withLock(file, async () => {
            const cur = await Deno.readTextFile(file).catch(() => head);
            await save(
              file,
              `${cur.endsWith("\n") ? cur : cur + "\n"}---\n${message(`echo ed-${n} >> ed.log`)}`,
            );
          });
          n++;
        }
        assert.ok(replacedReads() > 0, `no save landed in a read in ${n} saves:\n${host.log()}`);
        await waitUntil("all completed", async () => {
          const all = await read(file);
          return all.length === n && all.every((m) => m.status === "completed");
        }, { timeoutMs: 30_000, intervalMs: 200 }).catch(async (e) => {
          const all = await read(file);
          const by = all.reduce(
            (a, m) => ({ ...a, [m.status]: (a[m.status] ?? 0) + 1 }),
            {} as Record<string, number>,
          );
          throw new Error(
            `${e.message}\n${n} saved, ${JSON.stringify(by)} in the file\n${host.log().slice(-3000)}`,
          );
        });
        const lines = (await Deno.readTextFile(`${work}/ed.log`)).trim().split("\n");
        assert.deepEqual(lines, [...Array(n).keys()].map((i) => `ed-${i}`));
        await Deno.remove(file);
      });

      await t.step(
        "a stale save of a delivered message: not delivered again, its status written back",
        async () => {
          const stale = message("echo stale-once >> stale.log");
          await save(file, stale);
          // On a timeout: what the file and the host's log say.
          const why = async (e: Error) => {
            throw new Error(
              `${e.message}\n${await Deno.readTextFile(file).catch(() => "")}\n${host.log().slice(-2000)}`,
            );
          };
          await waitUntil("completed", async () => (await read(file))[0]?.status === "completed", {
            timeoutMs: 15_000,
          }).catch(why);
          // The editor still had the file open from before the delivery and saves it again.
          await save(file, stale);
          await waitUntil("written back", async () => {
            const m = (await read(file))[0];
            return /written over with an older copy/.test(host.log()) && m?.status === "completed" ? m : null;
          }, { timeoutMs: 15_000 }).catch(why);
          // Another message still goes through (the stale one was not left blocking the recipient).
          await save(file, `${stale}---\n${message("echo after >> stale.log")}`);
          await waitUntil("second completed", async () => {
            const all = await read(file);
            return all.length === 2 && all.every((m) => m.status === "completed");
          }, { timeoutMs: 15_000 }).catch(why);
          assert.equal(await Deno.readTextFile(`${work}/stale.log`), "stale-once\nafter\n");
        },
      );

      await t.step("a file broken while its message runs: the end is written once it is fixed", async () => {
        await Deno.remove(file);
        await save(file, message("read line; echo got-$line"));
        const running = await waitUntil("in progress", async () => {
          const text = await Deno.readTextFile(file).catch(() => "");
          return /status: in_progress/.test(text) ? text : null;
        }, { timeoutMs: 15_000 });
        // A human edits the file and leaves it broken for a while.
        await save(file, `${running}oops: [unclosed\n`);
        await waitUntil("the problem logged", () => /editor_to_ed\.yaml:\d+: invalid YAML/.test(host.log()));
        // The turn ends meanwhile: its end cannot be written yet.
        const send = await host.cli(["send", "ed", "--submit", "fine"]);
        assert.equal(send.code, 0, send.stderr);
        await waitUntil(
          "the end held back",
          () => /ended completed but the file could not be changed/.test(host.log()),
        );
        // Fixed: the end is written.
        await save(file, running);
        const m = await waitUntil("completed", async () => {
          const m = (await read(file))[0];
          return m?.status === "completed" ? m : null;
        }, { timeoutMs: 15_000 });
        assert.match(String(m.metadata.result), /got-fine/);
        assert.match(
          host.log(),
          /ended completed while its file could not be written; status completed written now/,
        );
      });
    });
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
});
