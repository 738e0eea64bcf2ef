/**
 * Records the bench's full-screen TUI workload once: a real Claude Code
 * 2.1.328 session (tests/_claude.ts) against the offline mock Messages API
 * (tests/_mock_anthropic.ts), several turns with streamed text, tool calls
 * and permission dialogs, in a 200x50 pane of a real host. The program runs
 * under `script`, which writes every byte Claude Code sent to its terminal
 * to the fixture (bench/fixtures/claude-2.1.328.raw, committed). The bench
 * (bench/corpus.ts) replays those bytes at full speed.
 *
 *   deno run -A bench/record_claude.ts [--out file]
 *
 * Not a test and not part of the bench: re-run it only to refresh the fixture.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { ensureClaude, isIdleComposer, prepareClaudeEnv, shQuote } from "../tests/_claude.ts";
import { ok, screen, waitScreen } from "../tests/_agents.ts";
import { startHost, waitUntil } from "../tests/_harness.ts";
import { startMockAnthropic } from "../tests/_mock_anthropic.ts";

const { values } = parseArgs({ args: Deno.args, options: { out: { type: "string" } } });
const OUT = values.out ?? new URL("./fixtures/claude-2.1.328.raw", import.meta.url).pathname;
const DIALOG = "Do you want to proceed?";

const LONG = [
  "Here is a summary of the change, in the shape agents usually answer:",
  "",
  "## What changed",
  "",
  "- `src/server/pane_worker.ts`: the parse loop now yields between slices.",
  "- `src/server/pane_pool.ts`: panes are spread over the workers by load.",
  "- `bench/corpus.ts`: four workloads, each paired with tmux.",
  "",
  "```ts",
  "function schedule(pane: Pane) {",
  "  if (pane.watched) queue.unshift(pane);",
  "  else queue.push(pane);",
  "}",
  "```",
  "",
  "| workload | before | after |",
  "|---|---|---|",
  "| log mix | 20.2 | 31.0 |",
  "| build | 25.1 | 36.4 |",
  "",
  "1. Run the bench.",
  "2. Compare with tmux.",
  "3. Report the worst workload.",
].join("\n");

async function main() {
  const bin = await ensureClaude();
  const mock = await startMockAnthropic();
  const host = await startHost();
  const setup = await prepareClaudeEnv({ baseUrl: mock.url });
  await Deno.mkdir(new URL("./fixtures/", import.meta.url), { recursive: true });
  const P = "rec";
  const cli = (...args: string[]) => ok(host, args);
  const submit = async (prompt: string) => {
    const before = mock.prompts().length;
    await cli("send", P, prompt, "--submit");
    await waitUntil(`"${prompt}" to reach the mock`, () => mock.prompts().length > before, {
      timeoutMs: 15_000,
    });
  };
  const idle = (what: string, pred: (s: string) => boolean = () => true) =>
    waitScreen(host, P, what, (s) => pred(s) && isIdleComposer(s), 30_000);
  const pressUntilGone = async (press: () => Promise<unknown>) => {
    for (let i = 0; i < 5; i++) {
      await press();
      try {
        await waitScreen(host, P, "dialog gone", (s) => !s.includes(DIALOG), 700);
        return;
      } catch { /* dropped: press again */ }
    }
    throw new Error("the dialog did not close");
  };
  try {
    const command = `script -qfec ${shQuote(shQuote(bin))} ${shQuote(OUT)}`;
    await cli("new", "-c", command, "--pane-name", P, "--cwd", setup.projectDir, ...setup.envArgs);
    await idle("the empty composer");

    mock.enqueue({ kind: "text", text: "Hello from the mock API. Ready to help.", chunks: 6 });
    await submit("hello");
    await idle("the first answer", (s) => s.includes("Ready to help."));

    mock.enqueue({ kind: "slow", text: LONG, seconds: 2 });
    await submit("summarise the change");
    await idle("the long answer", (s) => s.includes("Report the worst workload."));

    for (const [i, cmd] of ["touch a.txt", "mkdir -p out", "cp a.txt out/b.txt"].entries()) {
      mock.enqueue({
        kind: "bash",
        command: cmd,
        description: `Step ${i + 1}`,
        text: `I will run \`${cmd}\` first.`,
        then: `Step ${i + 1} done: the command ran.\n\n${LONG}`,
      });
      await submit(`run step ${i + 1}`);
      await waitScreen(host, P, "the permission dialog", (s) => s.includes(DIALOG), 20_000);
      await pressUntilGone(() => cli("send", P, "1"));
      await idle(`step ${i + 1}'s answer`, (s) => s.includes(`Step ${i + 1} done`));
    }

    mock.enqueue({ kind: "bash", command: "rm -rf build", description: "Clean", then: "Never shown." });
    await submit("clean the build");
    await waitScreen(host, P, "the permission dialog", (s) => s.includes(DIALOG), 20_000);
    await pressUntilGone(() => cli("key", P, "esc"));
    await idle("the refusal");

    mock.enqueue({ kind: "hold", text: "Working on it.\n" });
    await submit("a long task");
    await waitScreen(host, P, "busy", (s) => s.includes("esc to interrupt"), 20_000);
    await new Promise((r) => setTimeout(r, 1500)); // the spinner animates
    mock.release();
    await idle("the held turn's end");

    await cli("key", P, "ctrl-c");
    await waitScreen(host, P, "the exit prompt", (s) => s.includes("again to exit"));
    await cli("key", P, "ctrl-c");
    await waitUntil("claude to exit", async () => {
      const ls = await host.json<{ surfaces: { name: string; exited: boolean }[] }>(["ls", "--all"]);
      return ls.surfaces.find((s) => s.name === P)?.exited;
    }, { timeoutMs: 15_000 });
    // `script` frames the bytes with a "Script started ..." line and a "Script done ..." line.
    const raw = await Deno.readFile(OUT);
    const text = new TextDecoder("latin1").decode(raw);
    const start = text.startsWith("Script started") ? text.indexOf("\n") + 1 : 0;
    const doneAt = text.lastIndexOf("\nScript done");
    const bytes = raw.subarray(start, doneAt > start ? doneAt : raw.length);
    await Deno.writeFile(OUT, bytes);
    console.log(`wrote ${OUT}: ${bytes.length} bytes`);
    console.log((await screen(host, P)).split("\n").slice(-8).join("\n"));
  } finally {
    await host.stop();
    await mock.close();
    await setup.cleanup();
  }
}

if (import.meta.main) await main();
