/**
 * The durable YAML message queue (docs/paneio.md): the docs' example
 * file dropped into queue/ by hand is delivered to `middle_manager`
 * and ends completed; writers racing on one file lose nothing; 100 messages
 * from 4 writers at once to 2 recipients are each delivered exactly once, in
 * order per sender; bad files are reported with file:line and left untouched.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { ROOT, runCli, waitUntil, withHost } from "./_harness.ts";

const EXAMPLE = `# queue/grand_boss_to_middle_manager.yaml
id: msg-a1b2c3d4
from: grand_boss
to: middle_manager
type: task
status: pending
content: |
  プロジェクトの分析を実行してください
timestamp: "2025-02-02T12:00:00"
metadata:
  priority: high
  category: analysis
`;

type Msg = {
  id: string;
  from: string;
  to: string;
  status: string;
  content: string;
  metadata: Record<string, unknown>;
};

async function messages(root: string): Promise<Msg[]> {
  const out: Msg[] = [];
  for await (const e of Deno.readDir(`${root}/queue`)) {
    if (!e.name.endsWith(".yaml") || e.name.startsWith(".")) continue;
    const text = await Deno.readTextFile(`${root}/queue/${e.name}`);
    for (const d of parseAllDocuments(text) as { toJS(): Msg | null }[]) {
      const m = d.toJS();
      if (m) out.push(m);
    }
  }
  return out;
}

function writer(root: string, from: string, tos: string, count: number, template: string) {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      `--config=${ROOT}deno.json`,
      `${ROOT}tests/_queue_writer.ts`,
      root,
      from,
      tos,
      String(count),
      template,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
}

Deno.test("writers racing on one queue file lose nothing", async () => {
  const root = await Deno.makeTempDir({ prefix: "pfq-" });
  try {
    const outs = await Promise.all([0, 1, 2, 3].map(() => writer(root, "boss", "worker", 40, "task {n}")));
    for (const o of outs) assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
    const all = await messages(root);
    assert.equal(all.length, 160);
    assert.equal(new Set(all.map((m) => m.id)).size, 160);
    // Nothing left behind: no temp files.
    const names = [...Deno.readDirSync(`${root}/queue`)].map((e) => e.name);
    assert.deepEqual(names.filter((n) => n.endsWith(".tmp")), []);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("queue delivery", async (t) => {
  const root = await Deno.makeTempDir({ prefix: "pfq-" });
  const work = await Deno.makeTempDir({ prefix: "pfw-" });
  const config = JSON.stringify({ queue: { root, grace_secs: 3 } });
  try {
    await withHost({ config }, async (host) => {
      await host.json(["new", "--pane-name", "middle_manager", "--cwd", work, "-c", "PS1='$ ' exec sh"]);
      await waitUntil(
        "middle_manager ready",
        async () => (await host.cli(["ready", "middle_manager"])).code === 0,
        {
          timeoutMs: 15_000,
        },
      );

      await t.step("the docs' example file, dropped in by hand, is delivered and completed", async () => {
        // Written the way a person or an orchestrator would: plain write, then rename into place.
        await Deno.writeTextFile(`${work}/example.yaml`, EXAMPLE);
        await Deno.rename(`${work}/example.yaml`, `${root}/queue/grand_boss_to_middle_manager.yaml`);
        const done = await waitUntil("completed", async () => {
          const m = (await messages(root)).find((x) => x.id === "msg-a1b2c3d4");
          return m?.status === "completed" ? m : null;
        }, { timeoutMs: 15_000 });
        assert.match(
          await Deno.readTextFile(`${root}/queue/grand_boss_to_middle_manager.yaml`),
          /^# queue\/grand_boss/,
        );
        assert.equal(done.metadata.priority, "high");
        assert.match(String(done.metadata.result), /プロジェクトの分析を実行してください.*not found/);
        assert.ok(done.metadata.delivered_at && done.metadata.finished_at);
        const screen = (await host.cli(["read", "middle_manager", "--raw"])).stdout;
        assert.match(screen, /プロジェクトの分析を実行してください/);
        // The verbs see it.
        const ls = JSON.parse((await host.cli(["msg", "ls", "--json"])).stdout);
        assert.equal(ls.length, 1);
        assert.equal(ls[0].status, "completed");
        const shown = await host.cli(["msg", "show", "msg-a1b2c3d4"]);
        assert.match(shown.stdout, /status: completed/);
        const wait = await host.cli(["msg", "wait", "msg-a1b2c3d4", "--timeout", "5"]);
        assert.equal(wait.code, 0, wait.stderr);
        assert.match(wait.stdout, /not found/);
        // Status files: both agents, from the record.
        const agents = await waitUntil("status files", async () => {
          const a = JSON.parse((await host.cli(["agents", "--json"])).stdout) as {
            agent_name: string;
            state: string;
            statistics: Record<string, number>;
          }[];
          return a.length === 2 &&
              a.find((x) => x.agent_name === "middle_manager")?.statistics.tasks_completed === 1
            ? a
            : null;
        });
        const mm = agents.find((a) => a.agent_name === "middle_manager")!;
        assert.equal(mm.state, "idle");
        assert.equal(agents.find((a) => a.agent_name === "grand_boss")!.statistics.messages_sent, 1);
      });

      await t.step("msg send, then wait prints the result", async () => {
        const sent = await host.cli([
          "msg",
          "send",
          "--from",
          "grand_boss",
          "--to",
          "middle_manager",
          "echo forty-$((40+2))",
        ]);
        assert.equal(sent.code, 0, sent.stderr);
        const id = sent.stdout.trim();
        assert.match(id, /^msg-[0-9a-f]{12}$/);
        const w = await host.cli(["msg", "wait", id, "--timeout", "15"]);
        assert.equal(w.code, 0, w.stderr);
        assert.equal(w.stdout, "forty-42\n");
        // The second message went into the same file as a second document.
        const text = await Deno.readTextFile(`${root}/queue/grand_boss_to_middle_manager.yaml`);
        assert.equal(parseAllDocuments(text).length, 2);
      });

      await t.step(
        "100 messages from 4 writers at once to 2 recipients: each delivered once, in order per sender",
        async () => {
          for (const r of ["r1", "r2"]) {
            await host.json(["split", "h", "--name", r, "--cwd", work, "-c", "PS1='$ ' exec sh"]);
          }
          for (const r of ["r1", "r2"]) {
            await waitUntil(`${r} ready`, async () => (await host.cli(["ready", r])).code === 0, {
              timeoutMs: 15_000,
            });
          }
          const outs = await Promise.all(
            ["w1", "w2", "w3", "w4"].map((w) => writer(root, w, "r1,r2", 25, "echo {from}-{n} >> {to}.log")),
          );
          for (const o of outs) assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
          await waitUntil("100 completed", async () => {
            const all = (await messages(root)).filter((m) => m.from.startsWith("w"));
            return all.length === 100 && all.every((m) => m.status === "completed");
          }, { timeoutMs: 90_000, intervalMs: 200 });
          for (const r of ["r1", "r2"]) {
            const lines = (await Deno.readTextFile(`${work}/${r}.log`)).trim().split("\n");
            // 25 messages per writer alternating r1, r2: 13 to r1 and 12 to r2 each.
            const want = r === "r1" ? 52 : 48;
            assert.equal(lines.length, want, `${r}: ${lines.length} lines: ${lines.join(" ")}`);
            assert.equal(new Set(lines).size, want, `${r}: a message ran twice`);
            for (const w of ["w1", "w2", "w3", "w4"]) {
              const seq = lines.filter((l) => l.startsWith(`${w}-`)).map((l) => Number(l.split("-")[1]));
              assert.deepEqual(seq, [...seq].sort((a, b) => a - b), `${r}: ${w}'s messages out of order`);
              assert.equal(seq.length, r === "r1" ? 13 : 12);
            }
          }
        },
      );

      await t.step("bad files: file:line in the log, left untouched, the rest unharmed", async () => {
        const bad: Record<string, string> = {
          "a_to_middle_manager.yaml":
            "id: x\nfrom: a\nto: middle_manager\ntype: task\nstatus: pending\ncontent: [unclosed\n",
          "b_to_middle_manager.yaml": EXAMPLE.replace("grand_boss", "b").replace("msg-a1b2c3d4", "msg-b")
            .replace(
              "category: analysis",
              "category: analysis\nsurprise: 1",
            ).replace("metadata:", "extra: field\nmetadata:"),
          "c_to_middle_manager.yaml": EXAMPLE.replace("grand_boss", "c").replace("type: task", "type: 42"),
          "d_to_bad name.yaml": EXAMPLE.replace("grand_boss", "d").replace(
            "to: middle_manager",
            "to: bad name",
          ),
          // A message in another channel's file; the same id twice in one file.
          "f_to_middle_manager.yaml": EXAMPLE.replace("grand_boss", "g"),
          "h_to_middle_manager.yaml": `${EXAMPLE.replaceAll("grand_boss", "h")}---\n${
            EXAMPLE.replaceAll("grand_boss", "h").replace("content: |\n  ", "content: |\n  again ")
          }`,
        };
        for (const [name, text] of Object.entries(bad)) {
          await Deno.writeTextFile(`${root}/queue/${name}`, text);
        }
        // Bytes that are not UTF-8.
        const latin1 = new TextEncoder().encode(EXAMPLE.replace("grand_boss", "i"));
        latin1[latin1.indexOf(0xe3)] = 0xff;
        await Deno.writeFile(`${root}/queue/i_to_middle_manager.yaml`, latin1);
        // 10 MiB.
        await Deno.writeTextFile(
          `${root}/queue/e_to_middle_manager.yaml`,
          EXAMPLE.replace("grand_boss", "e").replace(
            "content: |\n  ",
            `content: |\n  ${"x".repeat(10 * 1024 * 1024)}\n  `,
          ),
        );
        await waitUntil("all five logged", () => {
          const log = host.log();
          return /a_to_middle_manager\.yaml:\d+: invalid YAML/.test(log) &&
            /b_to_middle_manager\.yaml:10: unknown field "extra"/.test(log) &&
            /c_to_middle_manager\.yaml:5: "type"/.test(log) &&
            /d_to_bad name\.yaml:4: "to": "bad name" is not a valid agent name/.test(log) &&
            /e_to_middle_manager\.yaml:1: file is \d+ bytes; the limit is/.test(log) &&
            /f_to_middle_manager\.yaml:2: a message from "grand_boss" to "middle_manager" belongs in queue\/grand_boss_to/
              .test(log) &&
            /h_to_middle_manager\.yaml:15: id "msg-a1b2c3d4" is used twice in this file \(line 2\)/.test(
              log,
            ) &&
            /i_to_middle_manager\.yaml:1: not valid UTF-8/.test(log);
        }, { timeoutMs: 15_000 }).catch((e) => {
          throw new Error(`${e.message}\n${host.log()}`);
        });
        for (const [name, text] of Object.entries(bad)) {
          assert.equal(await Deno.readTextFile(`${root}/queue/${name}`), text, `${name} was changed`);
        }
        // The host and other messages are unharmed.
        const sent = await host.cli([
          "msg",
          "send",
          "--from",
          "grand_boss",
          "--to",
          "middle_manager",
          "echo still-fine",
        ]);
        const w = await host.cli(["msg", "wait", sent.stdout.trim(), "--timeout", "15"]);
        assert.equal(w.stdout, "still-fine\n");
        // Fixing a file (any change that makes it valid) makes its message count again.
        await Deno.writeTextFile(
          `${root}/queue/.c.tmp`,
          EXAMPLE.replaceAll("grand_boss", "c").replace("content: |\n  ", "content: |\n  echo fixed-c; : "),
        );
        await Deno.rename(`${root}/queue/.c.tmp`, `${root}/queue/c_to_middle_manager.yaml`);
        const fixed = await waitUntil("the fixed file's message completed", async () => {
          const m = (await messages(root)).find((x) => x.from === "c");
          return m?.status === "completed" ? m : null;
        }, { timeoutMs: 15_000 });
        assert.match(String(fixed.metadata.result), /^fixed-c$/m);
        for (const name of Object.keys(bad)) await Deno.remove(`${root}/queue/${name}`);
        await Deno.remove(`${root}/queue/e_to_middle_manager.yaml`);
        await Deno.remove(`${root}/queue/i_to_middle_manager.yaml`);
      });

      await t.step("a recipient with no pane fails after the grace period", async () => {
        const sent = await host.cli(["msg", "send", "--from", "grand_boss", "--to", "nobody", "hello"]);
        const w = await host.cli(["msg", "wait", sent.stdout.trim(), "--timeout", "20"]);
        assert.equal(w.code, 1);
        assert.match(w.stderr, /no pane named "nobody" after 3 s/);
      });

      await t.step("msg prune removes finished messages", async () => {
        const before = (await messages(root)).length;
        const r = await host.cli(["msg", "prune", "--older-than", "1d"]);
        assert.equal(r.stdout, "pruned 0 messages\n");
        const all = await host.cli(["msg", "prune"]);
        assert.equal(all.code, 0);
        assert.equal(all.stdout, `pruned ${before} messages\n`);
        assert.equal((await messages(root)).length, 0);
      });
    });
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
});

Deno.test("msg verbs without a queue root say how to give one", async () => {
  const r = await runCli(["msg", "ls"], {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? "/tmp",
    PANEFLOW_SOCKET_PATH: "/tmp/pf-none/none.sock",
  });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /No queue root: give --queue <dir>/);
});
