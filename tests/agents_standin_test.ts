/**
 * Agent timings the real agents cannot be made to show on demand, played by a
 * stand-in: a small program named like the agent that draws the real agent's
 * screens from tests/fixtures/<tool>/ and, told so on its stdin, calls
 * `paneflow ai-hook` from inside its pane.
 *
 * - A Stop hook that lands after the agent's idle redraw keeps its reply. On a
 *   loaded machine opencode's plugin (a process it spawns per hook) delivered
 *   Stop after the screen had gone idle: the screen then said `finished` at
 *   once, with no `last_result`, and a `wait` for the turn's end read no reply
 *   (a loaded run of the suite). Now an idle screen ends a hooked turn only
 *   after it has looked idle for the hook grace (1.5 s), and a Stop within
 *   that time wins.
 * - Codex read from the screen alone: a finished turn caught half redrawn (its
 *   reply drawn, its `Worked for` line not yet) is the same turn, not a new
 *   one. Under load a `send --submit` ~0.2 s after the turn ended found the
 *   state back at `thinking` and reported `queued` (two loaded runs).
 */
import assert from "node:assert/strict";
import { paneflowCommand } from "./_claude.ts";
import { ROOT, type TestHost, waitUntil, withHost } from "./_harness.ts";

interface Status {
  tool: string | null;
  state: string;
  hooked: boolean;
  last_result: string | null;
}

/** `draw NAME [DROP]` draws a fixture (without the lines DROP matches); `hook EVENT JSON` calls ai-hook. */
const STAND_IN = `import re, subprocess, sys, termios
PF, TOOL, FIX = sys.argv[1:4]
attrs = termios.tcgetattr(0)
attrs[3] &= ~termios.ECHO
termios.tcsetattr(0, termios.TCSANOW, attrs)
def draw(name, drop):
    lines = open(f"{FIX}/{name}.txt").read().rstrip("\\n").split("\\n")
    lines = [l for l in lines if not (drop and re.search(drop, l))]
    sys.stdout.write("\\x1b[H\\x1b[2J" + "\\r\\n".join(lines))
    sys.stdout.flush()
draw("idle_startup", None)
for line in sys.stdin:
    verb, _, rest = line.strip().partition(" ")
    arg, _, more = rest.partition(" ")
    if verb == "draw":
        draw(arg, more)
    elif verb == "hook":
        subprocess.run(f"{PF} ai-hook --tool {TOOL} {arg}", shell=True, input=more.encode())
`;

/** Starts the stand-in for `tool` in a new pane and waits until paneflow detects it. */
async function standIn(host: TestHost, tool: string) {
  const dir = `${host.dir}/bin`;
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/${tool}`, STAND_IN);
  const pf = paneflowCommand().replaceAll("'", "'\\''");
  const id = (await host.call("workspace.create", {
    pane_name: tool,
    command: `exec python3 -u ${dir}/${tool} '${pf}' ${tool} ${ROOT}tests/fixtures/${tool}`,
  })).surface_id;
  const status = () => host.call("surface.status", { surface_id: id });
  const explain = () => host.call("surface.explain", { surface_id: id });
  const agent = {
    status,
    explain,
    why: async () => (await explain()).why,
    type: (cmd: string) => host.call("surface.send_text", { surface_id: id, text: `${cmd}\r` }),
    hook: (event: string, payload: unknown) => agent.type(`hook ${event} ${JSON.stringify(payload)}`),
    /** Draws a fixture and waits until paneflow has classified it by `rule`. */
    draw: async (fixture: string, rule: string, drop = "") => {
      await agent.type(`draw ${fixture} ${drop}`);
      await waitUntil(`screen rule ${rule}`, async () => (await explain()).screen?.rule === rule, {
        timeoutMs: 10_000,
      });
      return await status();
    },
  };
  await waitUntil(`${tool} detected`, async () => (await status()).tool === tool, { timeoutMs: 15_000 });
  return agent;
}

const CONFIG = { config: '{"terminal":{"rows":50,"cols":200}}' };

Deno.test("agents: a Stop hook after the idle redraw keeps the reply; without one the screen ends the turn", async () => {
  await withHost(CONFIG, async (host) => {
    const oc = await standIn(host, "opencode");

    // A turn whose idle screen comes long after its prompt hook, and its Stop later still.
    const turn = async () => {
      await oc.hook("UserPromptSubmit", { session_id: "s1", prompt: "ECHO late" });
      await oc.type("draw busy");
      const started = await waitUntil("the prompt hook", async () => {
        const s = await oc.status();
        return s.hooked && s.state === "thinking" && Date.now();
      }, { timeoutMs: 15_000 });
      // The hook state is older than its grace once the idle screen comes.
      await waitUntil("the hook's grace to pass", () => Date.now() - started > 1600);
      return await oc.draw("finished", "done");
    };

    const first = await turn();
    assert.equal(
      first.state,
      "thinking",
      `an idle screen of moments ago does not end a hooked turn: ${await oc.why()}`,
    );
    await oc.hook("Stop", { session_id: "s1", last_assistant_message: "the late reply" });
    const done = await waitUntil("the Stop hook", async () => {
      const s = await oc.status();
      return s.state === "finished" && s;
    }, { timeoutMs: 15_000 });
    assert.equal(done.last_result, "the late reply");
    assert.match(await oc.why(), /^hook Stop/);

    // No Stop at all: the screen ends the turn once it has looked idle for the grace.
    await turn();
    const t0 = Date.now();
    await waitUntil("finished from the screen", async () => {
      const s = await oc.status();
      return s.state === "finished" && s;
    }, { timeoutMs: 10_000 });
    assert.match(await oc.why(), /^screen rule "done" shows no busy line/);
    assert.ok(Date.now() - t0 < 5000, `finished ${Date.now() - t0} ms after the idle screen`);
  });
});

Deno.test("agents: without hooks, a finished Codex turn caught half redrawn stays finished", async () => {
  await withHost(CONFIG, async (host) => {
    const codex = await standIn(host, "codex");
    assert.equal((await codex.draw("busy", "busy")).state, "thinking");
    assert.equal((await codex.draw("finished", "idle_prompt")).state, "finished");

    // The same turn without its `Worked for` line: a redraw caught half done.
    const redrawn = await codex.draw("finished", "busy_unfinished", "Worked for");
    assert.equal(redrawn.state, "finished", `a redraw does not reopen the turn: ${await codex.why()}`);
    assert.match(await codex.why(), /a redraw, not a new turn/);
    assert.equal((await codex.draw("finished", "idle_prompt")).state, "finished");

    // After a busy screen the same picture is a turn whose reply streams: thinking.
    assert.equal((await codex.draw("busy", "busy")).state, "thinking");
    const streaming = await codex.draw("finished", "busy_unfinished", "Worked for");
    assert.equal(streaming.state, "thinking", await codex.why());
    assert.equal((await codex.draw("finished", "idle_prompt")).state, "finished");
  });
});
