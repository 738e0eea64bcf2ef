/**
 * `paneflow tmux` and the `tmux` shim on a real host: the commands Claude
 * Code's agent teams run, from inside a pane that found the shim first on
 * its PATH, with tmux's output, exit codes and error wording.
 */
import assert from "node:assert/strict";
import { startHost, waitUntil } from "./_harness.ts";

Deno.test("tmux shim: a pane made through it runs Claude Code's team commands against its own host", async () => {
  const host = await startHost();
  try {
    const tmux = (args: string[]) => host.cli(["tmux", ...args]);
    const made = await tmux(["new-session", "-d", "-s", "team", "-P", "-F", "#{session_name} #{pane_id}"]);
    assert.equal(made.stderr, "");
    const lead = made.stdout.trim().split(" ")[1];
    assert.match(made.stdout, /^team %\d+\n$/);
    assert.equal((await tmux(["has-session", "-t", "team"])).code, 0);
    const missing = await tmux(["has-session", "-t", "nope"]);
    assert.deepEqual([missing.code, missing.stderr], [1, "can't find session: nope\n"]);

    const out = `${host.dir}/out.txt`;
    const script = `${host.dir}/team.sh`;
    await Deno.writeTextFile(
      script,
      `exec >${out} 2>&1
echo "tmux=$(command -v tmux)"
me=$(tmux display-message -p '#{pane_id}'); echo "me=$me pane=$TMUX_PANE"
w=$(tmux display-message -p -t "$me" '#{window_id}')
new=$(tmux split-window -d -t "$me" -h -l 70% -P -F '#{pane_id}' -- cat); echo "new=$new"
tmux set-option -p -t "$new" remain-on-exit failed
tmux respawn-pane -k -t "$new" -- 'echo teammate-up; exec sleep 60'
tmux select-pane -t "$new" -T worker
echo "title=$(tmux display-message -p -t "$new" '#{pane_title}')"
echo "count=$(tmux list-panes -t "$w" -F '#{pane_id}' | wc -l)"
tmux select-layout -t "$w" tiled; echo "layout=$?"
tmux kill-pane -t %999; echo "rc=$?"
tmux kill-pane -t "$new"; echo "killed=$?"
echo "after=$(tmux list-panes -t "$w" -F '#{pane_id}' | wc -l)"
echo done
`,
    );
    const sent = await tmux(["send-keys", "-t", lead, `sh ${script}`, "Enter"]);
    assert.equal(sent.code, 0, sent.stderr);
    const text = await waitUntil("the team script to finish", async () => {
      const t = await Deno.readTextFile(out).catch(() => "");
      return t.includes("done") ? t : null;
    }, { timeoutMs: 60_000 });
    const got = Object.fromEntries(
      text.trim().split("\n").filter((l) => l.includes("=")).map((l) => [l.slice(0, l.indexOf("=")), l]),
    );
    assert.match(got.tmux, /tmux-shim\/tmux$/);
    assert.equal(got.me, `me=${lead} pane=${lead}`);
    assert.match(got.new, /^new=%\d+$/);
    assert.equal(got.title, "title=worker");
    assert.equal(got.count, "count=2");
    assert.equal(got.layout, "layout=0");
    assert.equal(got.rc, "rc=1");
    assert.ok(text.includes("can't find pane: %999"), text);
    assert.equal(got.killed, "killed=0");
    assert.equal(got.after, "after=1");

    // `new --tmux-compat`: the pane gets TMUX_PANE and the shim, without going through it.
    const marker = `${host.dir}/compat.txt`;
    const made2 = await host.json<{ surface_id: number }>([
      "new",
      "--tmux-compat",
      "--command",
      `echo "$TMUX_PANE $(tmux display-message -p '#{pane_id} #{session_name}')" > ${marker}; exec sleep 60`,
    ]);
    const line = await waitUntil("the compat pane's marker", async () => {
      const t = await Deno.readTextFile(marker).catch(() => "");
      return t.endsWith("\n") ? t.trim() : null;
    }, { timeoutMs: 30_000 });
    const id = made2.surface_id ??
      (made2 as unknown as { surface: { surface_id: number } }).surface?.surface_id;
    assert.match(line, new RegExp(`^%${id} %${id} `));
  } finally {
    await host.stop();
  }
});
