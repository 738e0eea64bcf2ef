/**
 * A Stop hook that lands after the agent's idle redraw keeps its reply. On a
 * loaded machine opencode's plugin (a process it spawns per hook) delivered
 * Stop after the screen had gone idle: the screen then said `finished` at
 * once, with no `last_result`, and a `wait` for the turn's end read no reply
 * (a loaded run of the suite). Now an idle screen ends a hooked turn only
 * after it has looked idle for the hook grace (1.5 s), and a Stop within that
 * time wins.
 *
 * The agent here is a stand-in named `opencode` that draws the real
 * opencode screens of tests/fixtures/opencode/ and calls `paneflow ai-hook`
 * from inside its pane when told to on stdin.
 */
import assert from "node:assert/strict";
import { paneflowCommand } from "./_claude.ts";
import { ROOT, waitUntil, withHost } from "./_harness.ts";

interface Status {
  tool: string | null;
  state: string;
  hooked: boolean;
  last_result: string | null;
}

const FAKE = `import json, subprocess, sys
PF = sys.argv[1]
FIX = sys.argv[2]
def draw(name):
    text = open(f"{FIX}/{name}.txt").read().rstrip("\\n").replace("\\n", "\\r\\n")
    sys.stdout.write("\\x1b[H\\x1b[2J" + text)
    sys.stdout.flush()
def hook(event, payload):
    subprocess.run(f"{PF} ai-hook --tool opencode {event}", shell=True, input=json.dumps(payload).encode())
draw("idle_startup")
for line in sys.stdin:
    cmd = line.strip()
    if cmd == "prompt":
        hook("UserPromptSubmit", {"session_id": "s1", "prompt": "ECHO late"})
        draw("busy")
    elif cmd == "idle":
        draw("finished")
    elif cmd == "stop":
        hook("Stop", {"session_id": "s1", "last_assistant_message": "the late reply"})
`;

Deno.test("agents: a Stop hook after the idle redraw keeps the reply; without one the screen ends the turn", async () => {
  await withHost({ config: '{"terminal":{"rows":50,"cols":200}}' }, async (host) => {
    const dir = `${host.dir}/bin`;
    await Deno.mkdir(dir);
    await Deno.writeTextFile(`${dir}/opencode`, FAKE);
    const fixtures = `${ROOT}tests/fixtures/opencode`;
    const pf = paneflowCommand().replaceAll("'", "'\\''");
    const id = (await host.call<{ surface_id: number }>("workspace.create", {
      pane_name: "oc",
      command: `exec python3 -u ${dir}/opencode '${pf}' ${fixtures}`,
    })).surface_id;
    const status = () => host.call<Status>("surface.status", { surface_id: id });
    const explain = () =>
      host.call<{ why: string; screen: { rule: string } | null }>("surface.explain", { surface_id: id });
    const why = async () => (await explain()).why;
    const type = (cmd: string) => host.call("surface.send_text", { surface_id: id, text: `${cmd}\r` });
    await waitUntil("opencode detected", async () => (await status()).tool === "opencode", {
      timeoutMs: 15_000,
    });

    // A turn whose idle screen comes long after its prompt hook, and its Stop later still.
    const turn = async () => {
      await type("prompt");
      const started = await waitUntil("the prompt hook", async () => {
        const s = await status();
        return s.hooked && s.state === "thinking" && Date.now();
      }, { timeoutMs: 15_000 });
      // The hook state is older than its grace once the idle screen comes.
      await waitUntil("the hook's grace to pass", () => Date.now() - started > 1600);
      await type("idle");
      await waitUntil("the idle screen classified", async () => (await explain()).screen?.rule === "done", {
        timeoutMs: 10_000,
      });
      return await status();
    };

    const first = await turn();
    assert.equal(
      first.state,
      "thinking",
      `an idle screen of moments ago does not end a hooked turn: ${await why()}`,
    );
    await type("stop");
    const done = await waitUntil("the Stop hook", async () => {
      const s = await status();
      return s.state === "finished" && s;
    }, { timeoutMs: 15_000 });
    assert.equal(done.last_result, "the late reply");
    assert.match(await why(), /^hook Stop/);

    // No Stop at all: the screen ends the turn once it has looked idle for the grace.
    await turn();
    const t0 = Date.now();
    await waitUntil("finished from the screen", async () => {
      const s = await status();
      return s.state === "finished" && s;
    }, { timeoutMs: 10_000 });
    assert.match(await why(), /^screen rule "done" shows no busy line/);
    assert.ok(Date.now() - t0 < 5000, `finished ${Date.now() - t0} ms after the idle screen`);
  });
});
