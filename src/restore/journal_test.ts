import assert from "node:assert/strict";
import { journalPaths, readJournal, stateDir, writeDurable } from "./journal.ts";

const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });

Deno.test("journal paths: the state dir, one journal per socket", () => {
  assert.equal(stateDir(env({ XDG_STATE_HOME: "/s" })), "/s/paneflow");
  assert.equal(stateDir(env({ HOME: "/h" })), "/h/.local/state/paneflow");
  const a = journalPaths("/run/a/paneflow.sock", env({ XDG_STATE_HOME: "/s" }));
  const b = journalPaths("/run/b/paneflow.sock", env({ XDG_STATE_HOME: "/s" }));
  assert.match(a.live, /^\/s\/paneflow\/journals\/paneflow-[0-9a-f]{13}\.json$/);
  assert.notEqual(a.live, b.live);
  assert.equal(journalPaths("/run/a/paneflow.sock", env({ XDG_STATE_HOME: "/s" })).live, a.live);
});

Deno.test("readJournal: a torn, foreign or invalid journal is set aside and named, never thrown", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pf-journal-" });
  try {
    const path = `${dir}/j.json`;
    assert.deepEqual(await readJournal(path), { journal: null, problem: null });
    const good = { version: 1, socket: "/s", pid: 1, written_at: 2, workspaces: [] };
    await writeDurable(path, JSON.stringify(good));
    assert.deepEqual((await readJournal(path)).journal, good);
    for (
      const [text, why] of [
        ['{"version":1,"socket":"/s","pid":1,"wri', /is not JSON .*a torn write/],
        ['{"version":7,"workspaces":[]}', /format version 7, this paneflow reads 1/],
        ['{"version":1,"socket":"/s","pid":1,"written_at":2,"workspaces":[{"id":3}]}', /"workspaces\.0\.id"/],
      ] as const
    ) {
      await Deno.writeTextFile(path, text);
      const r = await readJournal(path);
      assert.equal(r.journal, null);
      assert.match(r.problem!, why);
      assert.match(r.problem!, /was set aside as ".*j\.json\.bad-\d+(-\d+)?"/);
      assert.deepEqual(
        await readJournal(path),
        { journal: null, problem: null },
        "the bad file is out of the way",
      );
    }
    assert.equal([...Deno.readDirSync(dir)].filter((e) => e.name.includes(".bad-")).length, 3);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
