import assert from "node:assert/strict";
import { parseCommand, parseGlobals, TmuxError } from "./args.ts";

Deno.test("tmux args: global options, then a command with clustered flags and values", () => {
  const { globals, rest } = parseGlobals([
    "-S",
    "/tmp/s.sock",
    "-f",
    "/dev/null",
    "splitw",
    "-dhP",
    "-l70%",
    "-F",
    "#{pane_id}",
    "--",
    "cat",
  ]);
  assert.equal(globals.socketPath, "/tmp/s.sock");
  const cmd = parseCommand(rest);
  assert.equal(cmd.spec.name, "split-window");
  assert.deepEqual([...cmd.flags], [["d", true], ["h", true], ["P", true], ["l", "70%"], [
    "F",
    "#{pane_id}",
  ]]);
  assert.deepEqual(cmd.args, ["cat"]);
  assert.equal(parseGlobals(["-L", "x", "ls"]).globals.socketName, "x");
});

Deno.test("tmux args: the first word ends the flags; -e repeats", () => {
  const cmd = parseCommand(["send-keys", "-t", "%1", "-l", "x", "-y"]);
  assert.deepEqual(cmd.args, ["x", "-y"]);
  assert.equal(cmd.flags.get("l"), true);
  const env = parseCommand(["new-session", "-e", "A=1", "-e", "B=2"]);
  assert.deepEqual(env.repeated.get("e"), ["A=1", "B=2"]);
});

Deno.test("tmux args: errors worded as tmux's", () => {
  const message = (argv: string[]) => {
    try {
      parseCommand(argv);
    } catch (e) {
      assert.ok(e instanceof TmuxError);
      return e.message;
    }
    return "";
  };
  assert.equal(message(["frobnicate"]), "unknown command: frobnicate");
  assert.equal(message(["split-window", "-Q"]), "command split-window: unknown flag -Q");
  assert.equal(message(["kill-pane", "-t"]), "command kill-pane: -t expects an argument");
  assert.match(message(["kill"]), /^ambiguous command: kill, could be: /);
});
