/**
 * Captures the screen fixtures in tests/fixtures/claude/ from the real Claude Code
 * (tests/_claude.ts), in panes of a real host, against the mock Messages API,
 * driven only by paneflow's CLI verbs. Each fixture is the stdout of
 * `paneflow read <pane> --raw` once the state's distinctive text is on screen.
 *
 *   deno run -A scripts/claude_capture.ts [--only name,name] [--out dir]
 *
 * Not a test (it writes files); re-run it when the pinned version changes and
 * review the diff. Prints the timings it saw.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { CLAUDE_CODE_VERSION, ensureClaude, isIdleComposer, launchClaude } from "../tests/_claude.ts";
import { ok, screen, waitScreen as waitOnScreen } from "../tests/_agents.ts";
import { startHost, type TestHost, waitUntil } from "../tests/_harness.ts";
import { type MockAnthropic, startMockAnthropic } from "../tests/_mock_anthropic.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { only: { type: "string" }, out: { type: "string" } },
});
const OUT = values.out ?? new URL("../tests/fixtures/claude", import.meta.url).pathname;
const only = values.only ? new Set(values.only.split(",")) : null;

const timings: Record<string, number> = {};

async function cli(host: TestHost, ...args: string[]): Promise<void> {
  await ok(host, args);
}

/** Waits until `pred` holds on the pane's screen and returns that screen (15 s by default here). */
function waitScreen(
  host: TestHost,
  pane: string,
  what: string,
  pred: (s: string) => boolean,
  timeoutMs = 15_000,
): Promise<string> {
  return waitOnScreen(host, pane, what, pred, timeoutMs);
}

async function save(name: string, text: string): Promise<void> {
  if (only && !only.has(name)) return;
  await Deno.writeTextFile(`${OUT}/${name}.txt`, text);
  console.log(`wrote ${name}.txt`);
}

/**
 * Sends `press` until `gone` holds: Claude Code drops keys that arrive within
 * ~0.15 s of a dialog appearing, so one press may be lost. Returns how many
 * presses it took.
 */
async function pressUntil(
  host: TestHost,
  pane: string,
  press: () => Promise<void>,
  gone: (s: string) => boolean,
  what: string,
): Promise<number> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    await press();
    try {
      await waitScreen(host, pane, what, gone, 700);
      return attempt;
    } catch { /* dropped: press again */ }
  }
  throw new Error(`${what}: still not there after 5 presses`);
}

const DIALOG = "Do you want to proceed?";
const BUSY = "esc to interrupt";

/** Submits a prompt and waits until the mock has it. */
async function submit(host: TestHost, mock: MockAnthropic, pane: string, prompt: string): Promise<void> {
  const before = mock.prompts().length;
  await cli(host, "send", pane, prompt, "--submit");
  await waitUntil(`"${prompt}" to reach the mock`, () => mock.prompts().length > before, {
    timeoutMs: 10_000,
  });
}

async function main() {
  const bin = await ensureClaude();
  console.log(`claude ${CLAUDE_CODE_VERSION}: ${bin}`);
  const mock = await startMockAnthropic();
  const host = await startHost();
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const cc = await launchClaude(host, { baseUrl: mock.url, name: "cc" });
    cleanups.push(cc.setup.cleanup);
    timings["startup_to_empty_composer_ms"] = cc.startupMs;
    const P = cc.pane;
    await save("idle_startup", await screen(host, P));

    // Typed, not submitted.
    await cli(host, "send", P, "draft text that is not submitted");
    await save(
      "composer_text",
      await waitScreen(
        host,
        P,
        "the draft in the composer",
        (s) => /^❯\sdraft text that is not submitted/m.test(s),
      ),
    );
    await cli(host, "key", P, "ctrl-c"); // clears a non-empty composer
    await waitScreen(host, P, "the composer cleared", isIdleComposer);

    // A plain turn.
    mock.enqueue({ kind: "text", text: "Hello from the mock API." });
    let t0 = Date.now();
    await submit(host, mock, P, "hello");
    timings["submit_to_request_ms"] = Date.now() - t0;
    await save(
      "finished",
      await waitScreen(
        host,
        P,
        "the answer",
        (s) => s.includes("Hello from the mock API.") && isIdleComposer(s),
      ),
    );
    timings["submit_to_answer_on_screen_ms"] = Date.now() - t0;

    // Busy, nothing streamed yet, then interrupted before any output.
    mock.enqueue({ kind: "hold" });
    await submit(host, mock, P, "wait for the held reply");
    await save("busy", await waitScreen(host, P, "the busy footer", (s) => s.includes(BUSY)));
    t0 = Date.now();
    await cli(host, "key", P, "esc");
    await save(
      "interrupted_before_output",
      await waitScreen(host, P, "the busy footer gone", (s) => !s.includes(BUSY)),
    );
    timings["esc_to_not_busy_ms"] = Date.now() - t0;
    // Claude Code puts the unanswered prompt back into the composer: clear it.
    if (!isIdleComposer(await screen(host, P))) {
      await cli(host, "key", P, "ctrl-c");
      await waitScreen(host, P, "the composer cleared", isIdleComposer);
    }

    // Text streaming slowly: busy with partial output. Claude Code shows streamed
    // text a completed line at a time.
    const slow = [
      "First line of the slow answer.",
      "Second line.",
      "Third line.",
      "Fourth line.",
      "Last line.",
    ];
    mock.enqueue({ kind: "slow", text: slow.join("\n"), seconds: 3 });
    await submit(host, mock, P, "stream slowly");
    await save(
      "busy_streaming",
      await waitScreen(
        host,
        P,
        "partial text while busy",
        (s) => s.includes("Second line.") && s.includes(BUSY),
      ),
    );
    await waitScreen(host, P, "the slow answer to end", (s) => s.includes("Last line.") && isIdleComposer(s));

    // Interrupted after some output.
    mock.enqueue({ kind: "hold", text: "Partial answer before the interrupt.\n" });
    await submit(host, mock, P, "start and get interrupted");
    await waitScreen(host, P, "the partial answer", (s) => s.includes("Partial answer") && s.includes(BUSY));
    await cli(host, "key", P, "esc");
    await save(
      "interrupted",
      await waitScreen(
        host,
        P,
        "the interrupt notice",
        (s) => s.includes("Interrupted") && isIdleComposer(s),
      ),
    );

    // Ctrl-C while busy interrupts too.
    mock.enqueue({ kind: "hold", text: "Partial answer before ctrl-c.\n" });
    await submit(host, mock, P, "start and get ctrl-c");
    await waitScreen(host, P, "the partial answer", (s) => s.includes("before ctrl-c.") && s.includes(BUSY));
    t0 = Date.now();
    await cli(host, "key", P, "ctrl-c");
    await save(
      "interrupted_ctrl_c",
      await waitScreen(
        host,
        P,
        "the interrupt notice",
        (s) => s.lastIndexOf("Interrupted") > s.lastIndexOf("before ctrl-c.") && !s.includes(BUSY),
      ),
    );
    timings["ctrl_c_to_not_busy_ms"] = Date.now() - t0;

    // Permission dialog for Bash, approved with a typed "1".
    mock.enqueue({
      kind: "bash",
      command: "touch paneflow-marker.txt",
      description: "Create a marker file",
      then: "Created the marker file.",
    });
    t0 = Date.now();
    await submit(host, mock, P, "create the marker file");
    await save(
      "permission_bash",
      await waitScreen(host, P, "the permission dialog", (s) => s.includes(DIALOG)),
    );
    timings["submit_to_dialog_ms"] = Date.now() - t0;
    timings["presses_to_approve"] = await pressUntil(
      host,
      P,
      () => cli(host, "send", P, "1"),
      (s) => !s.includes(DIALOG),
      "the dialog to close after 1",
    );
    await save(
      "permission_approved",
      await waitScreen(
        host,
        P,
        "the follow-up answer",
        (s) => s.includes("Created the marker file.") && isIdleComposer(s),
      ),
    );
    const approved = mock.requests.at(-1);
    if (approved?.answered !== "followup") throw new Error("the tool_result did not reach the mock");
    console.log("tool_result:", JSON.stringify(approved.toolResults));

    // Permission dialog refused with Esc (no hook fires for this).
    mock.enqueue({
      kind: "bash",
      command: "touch refused.txt",
      description: "Create a file",
      then: "Never shown.",
    });
    await submit(host, mock, P, "create another file");
    await waitScreen(host, P, "the permission dialog", (s) => s.includes(DIALOG));
    timings["presses_to_refuse_esc"] = await pressUntil(
      host,
      P,
      () => cli(host, "key", P, "esc"),
      (s) => !s.includes(DIALOG),
      "the dialog to close after esc",
    );
    await save(
      "permission_refused_esc",
      await waitScreen(host, P, "the refusal", (s) => s.includes("Interrupted") && isIdleComposer(s)),
    );

    // Permission dialog answered "No" (option 4).
    mock.enqueue({
      kind: "bash",
      command: "touch declined.txt",
      description: "Create a file",
      then: "Never shown.",
    });
    await submit(host, mock, P, "create a third file");
    await waitScreen(host, P, "the permission dialog", (s) => s.includes(DIALOG));
    timings["presses_to_refuse_4"] = await pressUntil(
      host,
      P,
      () => cli(host, "send", P, "4"),
      (s) => !s.includes(DIALOG),
      "the dialog to close after 4",
    );
    await save("permission_refused_no", await waitScreen(host, P, "the composer back", isIdleComposer));

    // API errors (CLAUDE_CODE_MAX_RETRIES=0, so they show at once).
    for (
      const [name, reply] of [
        ["api_error_529", { kind: "error", status: 529 }],
        ["api_error_500", { kind: "error", status: 500 }],
        ["api_error_stream", { kind: "stream_error" }],
      ] as const
    ) {
      mock.enqueue(reply);
      // After a stream error Claude Code repeats the request without streaming.
      if (reply.kind === "stream_error") mock.enqueue({ kind: "error", status: 529 });
      t0 = Date.now();
      await submit(host, mock, P, `trigger ${name}`);
      await save(
        name,
        await waitScreen(host, P, `the ${name} notice`, (s) =>
          s.includes("API Error") && !s.includes(BUSY) &&
          s.lastIndexOf("API Error") > s.lastIndexOf(`trigger ${name}`)),
      );
      timings[`${name}_on_screen_ms`] = Date.now() - t0;
    }

    // A message queued while busy.
    mock.enqueue({ kind: "hold", text: "Working on the first.\n" }, {
      kind: "text",
      text: "Answer to the queued one.",
    });
    await submit(host, mock, P, "first, held");
    await waitScreen(host, P, "busy", (s) => s.includes(BUSY));
    await cli(host, "send", P, "queued while busy", "--submit");
    await save("queued", await waitScreen(host, P, "the queued notice", (s) => s.includes("Queued")));
    mock.release();
    await waitScreen(
      host,
      P,
      "the queued answer",
      (s) => s.includes("Answer to the queued one.") && isIdleComposer(s),
    );

    // A draft typed while a turn runs: the status line loses `esc to interrupt`
    // (it shows no hints while the input box holds text); the spinner line stays.
    mock.enqueue({ kind: "hold" });
    await submit(host, mock, P, "held while a draft is typed");
    await waitScreen(host, P, "busy", (s) => s.includes(BUSY));
    await cli(host, "send", P, "a draft typed while busy");
    await save(
      "busy_draft",
      await waitScreen(host, P, "the draft while busy", (s) => /^❯\sa draft typed while busy/m.test(s)),
    );
    await cli(host, "key", P, "ctrl-u");
    await waitScreen(host, P, "the draft cleared", (s) => s.includes(BUSY));
    mock.release();
    await waitScreen(host, P, "the held turn to end", isIdleComposer);

    // The same after some output: the spinner line is gone then too.
    mock.enqueue({ kind: "hold", text: "Partial answer while a draft is typed.\n" });
    await submit(host, mock, P, "answering while a draft is typed");
    await waitScreen(
      host,
      P,
      "the partial answer",
      (s) => s.includes("while a draft is typed.") && s.includes(BUSY),
    );
    await cli(host, "send", P, "a draft typed while answering");
    await save(
      "busy_output_draft",
      await waitScreen(
        host,
        P,
        "the draft while answering",
        (s) => /^❯\sa draft typed while answering/m.test(s),
      ),
    );
    await cli(host, "key", P, "ctrl-u");
    await waitScreen(host, P, "the draft cleared", (s) => s.includes(BUSY));
    mock.release();
    await waitScreen(host, P, "the held turn to end", isIdleComposer);

    // A finished turn with a draft in the input box: the `· done` line is there.
    await cli(host, "send", P, "a draft after the turn");
    await save(
      "finished_draft",
      await waitScreen(host, P, "the draft after the turn", (s) => /^❯\sa draft after the turn/m.test(s)),
    );
    await cli(host, "key", P, "ctrl-u");
    await waitScreen(host, P, "the draft cleared", isIdleComposer);

    // The exit prompt after one ctrl-c at an empty composer, then exit.
    await cli(host, "key", P, "ctrl-c");
    await save(
      "exit_prompt",
      await waitScreen(host, P, "the exit prompt", (s) => s.includes("again to exit")),
    );
    await cli(host, "key", P, "ctrl-c");
    await save("exited_ctrl_c", await waitScreen(host, P, "the resume hint", (s) => s.includes("--resume")));

    // /exit in a second claude.
    const c2 = await launchClaude(host, { baseUrl: mock.url, name: "cc2" });
    cleanups.push(c2.setup.cleanup);
    await cli(host, "send", c2.pane, "/exit");
    await save(
      "composer_slash_exit",
      await waitScreen(host, c2.pane, "the slash menu", (s) => /^❯\s\/exit/m.test(s)),
    );
    t0 = Date.now();
    await cli(host, "send", c2.pane, "", "--submit");
    type Ls = { surfaces: { name: string; exited: boolean; exit_code: number | null }[] };
    await waitUntil("cc2 to exit", async () => {
      const ls = await host.json<Ls>(["ls", "--all"]);
      return ls.surfaces.find((s) => s.name === c2.pane)?.exited;
    }, { timeoutMs: 15_000 });
    timings["slash_exit_to_process_exit_ms"] = Date.now() - t0;
    await save("exited_slash_exit", await screen(host, c2.pane));
    const ls = await host.json<Ls>(["ls", "--all"]);
    console.log("panes:", JSON.stringify(ls.surfaces.map((s) => [s.name, s.exited, s.exit_code])));
    console.log(
      "requests:",
      JSON.stringify(mock.requests.map((r) => `${r.method} ${r.path}${r.query} ${r.kind}`)),
    );
    console.log("timings:", JSON.stringify(timings, null, 2));
  } catch (e) {
    console.error(`--- host log ---\n${host.log()}`);
    throw e;
  } finally {
    await host.stop();
    await mock.close();
    for (const c of cleanups) await c();
  }
}

await main();
