/**
 * A guided tour of paneflow: starts a private host on a temp socket and
 * drives it only through the real CLI (`deno run -A main.ts <verb>`), the
 * way a script or an agent would. Run it with `deno task tour`.
 *
 * Every command is echoed as `$ paneflow ...` with what it printed; lines
 * starting with `…` are the demo polling the CLI until something shows.
 * The host is stopped and the temp dir removed at the end, on failure and
 * on Ctrl-C.
 *
 * @module
 */
import { ROOT } from "./_script.ts";

const MAIN = `${ROOT}main.ts`;
const CONFIG = `${ROOT}deno.json`;
const DENO = Deno.execPath();
/** How long any one wait may take before the demo gives up. */
const WAIT_MS = 30_000;

const color = Deno.stdout.isTerminal() && !Deno.env.get("NO_COLOR");
const dim = (s: string) => (color ? `\x1b[2m${s}\x1b[0m` : s);
const bold = (s: string) => (color ? `\x1b[1m${s}\x1b[0m` : s);

const dir = await Deno.makeTempDir({ prefix: "paneflow-demo-" });
const project = `${dir}/project`;
const socket = `${dir}/paneflow.sock`;
const configFile = `${dir}/config.jsonc`;
const env: Record<string, string> = {
  ...Deno.env.toObject(),
  PANEFLOW_SOCKET_PATH: socket,
  PANEFLOW_CONFIG: configFile,
  PANEFLOW_IPC_SCRIPTING: "1",
};

/** Shows `$DEMO` instead of the long temp path. */
const short = (s: string) => s.replaceAll(dir, "$DEMO");

function quote(arg: string): string {
  return /^[\w@%+=:,./$-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `paneflow <args>` against the demo's host, quietly. */
async function cli(args: string[]): Promise<Run> {
  // After Ctrl-C only the cleanup may talk to the host (`new` would start another).
  if (interrupted && args[0] !== "api") throw new Error("interrupted");
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", "--quiet", `--config=${CONFIG}`, MAIN, ...args],
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** One JSON document on one line, cut to fit a terminal. */
function compactJson(text: string): string {
  try {
    const line = JSON.stringify(JSON.parse(text));
    return line.length > 110 ? `${line.slice(0, 109)}…` : line;
  } catch {
    return text.trimEnd();
  }
}

/** Re-pads an aligned table after {@link short} changed cell widths. */
function realign(text: string): string {
  const rows = text.split("\n").map((l) => l.split(/ {2,}/));
  if (rows.some((r) => r.length !== rows[0].length)) return text;
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ")).join(
    "\n",
  );
}

/**
 * Echoes `$ paneflow <args>`, runs it and prints its output (JSON compacted
 * to one line). A non-zero exit fails the demo.
 */
async function pf(args: string[], note = ""): Promise<Run> {
  console.log(bold(short(`$ paneflow ${args.map(quote).join(" ")}`)) + (note ? dim(`   # ${note}`) : ""));
  const r = await cli(args);
  const out = r.stdout.trimStart().startsWith("{") ? compactJson(r.stdout) : r.stdout.trimEnd();
  if (out) console.log(/^ID {2}/.test(out) ? realign(short(out)) : short(out));
  if (r.code !== 0) {
    throw new Error(`paneflow ${args.join(" ")} exited ${r.code}: ${r.stderr.trim()}`);
  }
  return r;
}

/** Polls `probe` (a quiet CLI call) until it returns a value, with a deadline. */
async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const start = Date.now();
  let delay = 50;
  while (true) {
    const value = await probe();
    if (value) {
      console.log(dim(`… ${what} (${((Date.now() - start) / 1000).toFixed(1)} s)`));
      return value;
    }
    if (Date.now() - start > WAIT_MS) throw new Error(`Gave up after ${WAIT_MS / 1000} s waiting: ${what}`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 400);
  }
}

/** Polls `paneflow read <pane> --raw` until the text matches. */
function untilPaneShows(pane: string, marker: string | RegExp, label = String(marker)): Promise<string> {
  return until(`polled \`paneflow read ${pane} --raw\` until "${label}" showed`, async () => {
    const r = await cli(["read", pane, "--raw", "--lines", "100"]);
    const hit = typeof marker === "string" ? r.stdout.includes(marker) : marker.test(r.stdout);
    return r.code === 0 && hit && r.stdout;
  });
}

interface Pane {
  surface_id: number;
  name: string | null;
  cmd: string | null;
  exited: boolean;
  exit_code: number | null;
}

async function panes(): Promise<Pane[]> {
  const r = await cli(["ls", "--all"]);
  return r.code === 0 ? (JSON.parse(r.stdout) as { surfaces: Pane[] }).surfaces : [];
}

let hostStarted = false;
let interrupted = false;
let cleaning: Promise<void> | null = null;

/** Stops the host (through the CLI) and removes the temp dir; runs once. */
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    if (hostStarted) {
      console.log(bold("$ paneflow api system.shutdown"));
      const r = await cli(["api", "system.shutdown"]);
      console.log(short((compactJson(r.stdout) || r.stderr).trim()));
      // The host removes its socket on the way out.
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        try {
          await Deno.lstat(socket);
        } catch {
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    console.log(dim(`Cleaned up: host stopped, ${dir} removed.`));
  })();
  return cleaning;
}

async function hostLogTail(): Promise<string> {
  try {
    return (await Deno.readTextFile(`${dir}/paneflow.log`)).trim().split("\n").slice(-10).join("\n");
  } catch {
    return "";
  }
}

async function tour(): Promise<void> {
  // The first run on a fresh clone downloads the npm packages; do it up
  // front so the host starts within its deadline.
  const prep = await new Deno.Command(DENO, {
    args: ["install", "--quiet", `--config=${CONFIG}`],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!prep.success) {
    throw new Error(`deno install failed: ${new TextDecoder().decode(prep.stderr).trim()}`);
  }

  await Deno.mkdir(project);
  await Deno.writeTextFile(
    `${project}/build.sh`,
    [
      'echo "building demo-app"',
      "for step in fetch compile link test; do",
      '  printf "step %-8s ... " "$step"; sleep 0.2; echo ok',
      "done",
      'echo "BUILD OK"',
      "",
    ].join("\n"),
  );
  await Deno.writeTextFile(`${project}/notes.txt`, "hello from the demo project\n");
  await Deno.writeTextFile(
    configFile,
    [
      "// paneflow config for the demo (JSONC). A plain /bin/sh keeps the",
      "// shell pane free of your shell's rc files and prompt theme.",
      '{ "terminal": { "shell": "/bin/sh" } }',
      "",
    ].join("\n"),
  );

  console.log(bold("paneflow demo") + " — a private host, driven only through the CLI");
  console.log(`DEMO=${dir}`);
  console.log(dim("socket $DEMO/paneflow.sock · config $DEMO/config.jsonc · PANEFLOW_IPC_SCRIPTING=1\n"));

  hostStarted = true;
  await pf(["serve", "--detach"], "returns once the socket answers");
  await pf(["new", "--name", "demo", "--pane-name", "build", "--cwd", project, "-c", "sh build.sh"]);
  await pf(["split", "h", "--name", "shell", "--cwd", project], "a shell to the right");
  await pf(["ls", "--human"]);

  console.log();
  await untilPaneShows("build", "BUILD OK");
  await pf(["read", "build", "--lines", "3"], "fenced: pane output is untrusted data");
  await pf(["read", "build", "--raw", "--lines", "2"]);
  await pf(["search", "build", "compile", "--human"]);

  console.log();
  await pf(["send", "shell", 'echo "I am pane $PANEFLOW_SURFACE_ID"; ls', "--submit"]);
  await untilPaneShows("shell", "notes.txt");
  await pf(["read", "shell", "--raw", "--lines", "3"]);

  console.log();
  await pf(["send", "shell", "sleep 600", "--submit"], "something long-running");
  // The host reads a pane's foreground command from /proc, so on Linux `ls`
  // shows what runs; elsewhere the demo waits on the screen instead.
  const proc = Deno.build.os === "linux";
  const shellRuns = async (cmd: RegExp) =>
    (await panes()).some((p) => p.name === "shell" && cmd.test(p.cmd ?? ""));
  if (proc) {
    await until("polled `paneflow ls` until the shell ran sleep and the build had exited", async () => {
      const [build, shell] = [
        (await panes()).find((p) => p.name === "build"),
        await shellRuns(/\bsleep 600\b/),
      ];
      return build?.exited && shell;
    });
    await pf(["ls", "--human"], "build exited 0 and stays readable; CMD is live");
  } else {
    await untilPaneShows("shell", "sleep 600");
  }
  await pf(["key", "shell", "ctrl-c"]);
  if (proc) {
    await until(
      "polled `paneflow ls` until the shell was back at its prompt",
      () => shellRuns(/^\/bin\/sh$/),
    );
  }
  await pf(["send", "shell", 'echo "sleep stopped, status $?"', "--submit"]);
  await untilPaneShows("shell", /sleep stopped, status \d+/, "sleep stopped, status <n>");
  await pf(["read", "shell", "--raw", "--lines", "3"]);

  console.log();
  await pf(["rename", "shell", "console"]);
  await pf(["layout", "tiled"]);
  await pf(["close", "build"]);
  await pf(["ls", "--human"]);
}

let failed = false;
const onInterrupt = () => {
  interrupted = true;
  console.log(dim("\nInterrupted; cleaning up…"));
  cleanup().finally(() => Deno.exit(130));
};
Deno.addSignalListener("SIGINT", onInterrupt);
try {
  await tour();
  console.log();
} catch (e) {
  failed = true;
  if (interrupted) await new Promise(() => {}); // cleanup() exits with 130
  console.error(`\ndemo failed: ${short((e as Error).message)}`);
  const log = await hostLogTail();
  if (log) console.error(`host log ($DEMO/paneflow.log):\n${short(log)}`);
} finally {
  await cleanup();
  Deno.removeSignalListener("SIGINT", onInterrupt);
}
if (failed) Deno.exit(1);
console.log(bold("Demo complete.") + " Next: deno run -A main.ts help · deno task test · README.md");
