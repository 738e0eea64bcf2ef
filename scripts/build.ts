/**
 * Builds the bundled CLI (`deno task build`): `dist/cli/main.js` and one
 * file per light verb, as plain JavaScript.
 *
 *   deno task build [--out <dir>]
 *   deno task install            # build, then install `paneflow` to run it
 *
 * Under `deno run`, each module a start loads costs it ~0.1 ms (reading it,
 * checking its transpiled copy, compiling it), which is most of what a
 * one-shot `paneflow read` adds to Deno's own start (bench/). Bundled,
 * `read` is one file (main.js holds it with the client, as main.ts imports
 * them) and every other light verb two: main.js and its own self-contained
 * file. The heavy verbs (the host, `up`, `flow`, the MCP bridge, `api`: their
 * graphs hold npm packages) are not bundled: the bundle holds a one-line
 * re-export of each from the source tree, so src/verbs/mod.ts finds every
 * verb as `src/verbs/<name>.js` beside the bundle's main.js, and the host
 * still runs from source, with its worker and npm packages where Deno
 * expects them. Error classes then exist in several copies, which is why
 * src/errors.ts maps errors by their exit code, not by their class.
 *
 * A build checks that no bundled file holds or imports an npm package: a
 * light verb that starts importing one fails the build, naming the file and
 * the package, instead of pulling the package into every start.
 *
 * @module
 */
import { relative, resolve } from "node:path";
import { Failure, fromCaller, parseOptions, ROOT, runScript } from "./_script.ts";
import { verbs } from "../src/verbs/mod.ts";
import { shQuote } from "../src/sh.ts";
import { HOST_V8_FLAGS } from "../src/paths.ts";

export { Failure };
const VERBS = `${ROOT}src/verbs/`;

/** Verbs whose module graphs hold npm packages (`heavy` in the verb registry): loaded from source, never bundled. */
export const HEAVY_VERBS = verbs.filter((v) => v.heavy).map((v) => v.name);

const USAGE = `Usage: deno task build [--out <dir>] [--install]

Bundles the CLI into <dir> (default: dist/cli): main.js is the program.

Options:
  --out <dir>   Where to write the bundle, inside the project (whose deno.json
                it runs with); emptied first if it holds an earlier build
  --install     Then put \`paneflow\`, \`paneflow-mcp\` and \`paneflow-ai-hook\`
                commands that run it into $PANEFLOW_INSTALL_DIR (default ~/.local/bin)
  -h, --help    Show this help`;

/** The verb modules (src/verbs/<name>.ts, without helpers, tests or the registry). */
function verbNames(): string[] {
  return [...Deno.readDirSync(VERBS)]
    .map((e) => e.name)
    .filter((n) => n.endsWith(".ts") && !n.startsWith("_") && !n.endsWith("_test.ts") && n !== "mod.ts")
    .map((n) => n.slice(0, -3))
    .sort();
}

async function* jsFiles(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) yield* jsFiles(path);
    else if (e.name.endsWith(".js")) yield path;
  }
}

/** Static imports (their `from` lines), bare side-effect imports and literal dynamic imports. */
const IMPORTS =
  /^(?:import\b|export\b|\})[^\n]*?\bfrom\s*"([^"]+)"|^import\s*"([^"]+)"|\bimport\(\s*"([^"]+)"/m;
/** The comment deno bundle puts before each module it inlined, for an npm package's. */
const PACKAGE = /^\/\/ (?:node_modules\/|npm:)(\S+)/m;

/**
 * The bundled files must hold no npm package (deno bundle inlines what it
 * finds in node_modules/) and import nothing (no remote module).
 */
async function checkSelfContained(out: string, stubs: Set<string>): Promise<void> {
  for await (const file of jsFiles(out)) {
    if (stubs.has(file)) continue;
    const text = await Deno.readTextFile(file);
    const imported = IMPORTS.exec(text);
    const inlined = PACKAGE.exec(text);
    const what = imported
      ? `imports "${imported[1] ?? imported[2] ?? imported[3]}"`
      : inlined && `holds ${inlined[1]}`;
    if (what) {
      throw new Failure(
        `${relative(out, file)} ${what}: a bundled verb must not load npm packages ` +
          `(mark it "heavy: true" in src/verbs/mod.ts to load it from source instead)`,
      );
    }
    const timer = NODE_TIMERS.exec(text);
    if (timer) {
      throw new Failure(
        `${relative(out, file)} calls ${timer[1]}: Deno's global timers load its Node layer ` +
          `(~7 ms of every start); use src/client/timer.ts`,
      );
    }
  }
}

/** Deno 2.9's global timers are Node's: their first call loads node:timers and what it needs. */
const NODE_TIMERS = /\b(setTimeout|setInterval|setImmediate)\(/;

/** The file that marks a directory as a build of ours, so a rebuild may empty it. */
const MARKER = ".paneflow-cli";

/**
 * Empties `out` for a new build: it must be below the project (the bundle
 * runs with the project's deno.json, found above it) and either missing,
 * empty or an earlier build.
 */
function clearOut(out: string): void {
  if (!`${out}/`.startsWith(ROOT) || `${out}/` === ROOT) {
    throw new Failure(`${out} is not inside the project (${ROOT}), whose deno.json the bundle runs with`, 2);
  }
  let names: string[];
  try {
    names = [...Deno.readDirSync(out)].map((e) => e.name);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    if (e instanceof Deno.errors.NotADirectory) {
      throw new Failure(`${out} is a file, not a directory`, 2, { cause: e });
    }
    throw e;
  }
  if (names.length && !names.includes(MARKER)) {
    throw new Failure(`${out} is not empty and holds no earlier build; refusing to empty it`, 2);
  }
  Deno.removeSync(out, { recursive: true });
}

/** Builds the bundle into `out` (see {@link clearOut}), leaving the `heavy` verbs in the source tree. */
export async function build(out: string, heavy: string[] = HEAVY_VERBS): Promise<void> {
  out = resolve(out);
  const names = verbNames();
  const light = names.filter((n) => !heavy.includes(n));
  clearOut(out);
  // Marked before anything else is written: a build that fails half-way
  // leaves a directory the next build may empty.
  await Deno.mkdir(out, { recursive: true });
  await Deno.writeTextFile(
    `${out}/${MARKER}`,
    "Built by scripts/build.ts; a rebuild empties this directory.\n",
  );
  const bundled = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--platform",
      "deno",
      "--outdir",
      out,
      `${ROOT}main.ts`,
      ...light.map((n) => `${VERBS}${n}.ts`),
    ],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (bundled.code !== 0) {
    throw new Failure(`deno bundle failed:\n${new TextDecoder().decode(bundled.stderr).trim()}`);
  }
  const stubs = new Set<string>();
  for (const name of heavy) {
    const stub = `${out}/src/verbs/${name}.js`;
    await Deno.mkdir(`${out}/src/verbs`, { recursive: true });
    const source = relative(`${out}/src/verbs`, `${VERBS}${name}.ts`);
    await Deno.writeTextFile(
      stub,
      `// Loaded from source (scripts/build.ts: HEAVY_VERBS).\nexport { default } from ${
        JSON.stringify(source)
      };\n`,
    );
    stubs.add(stub);
  }
  for (const name of light) {
    try {
      await Deno.stat(`${out}/src/verbs/${name}.js`);
    } catch {
      throw new Failure(`deno bundle wrote no src/verbs/${name}.js into ${out}`);
    }
  }
  await checkSelfContained(out, stubs);
}

/**
 * V8 compiles a function on its first call; a one-shot verb calls most of
 * its functions once, and the code cache Deno keeps for main.js holds only
 * what was compiled before it ran. `--no-lazy` compiles (and caches) all of
 * main.js up front: a `paneflow read` spends ~2 ms less running its
 * JavaScript (bench/oneshot.ts). The heavy verbs, which load the host and its
 * packages from source and run for long, start without it; `serve` with the
 * V8 flags a detached host gets (src/paths.ts).
 */
const LIGHT_FLAGS = ["--v8-flags=--no-lazy"];
const SERVE_FLAGS = [`--v8-flags=${HOST_V8_FLAGS}`];

/** The names (with aliases) that run a heavy verb other than `serve`. */
function heavyNames(): string[] {
  return verbs.filter((v) => v.heavy && v.name !== "serve").flatMap((v) => [v.name, ...(v.aliases ?? [])]);
}

/**
 * Writes `paneflow` (and `paneflow-mcp`, `paneflow-ai-hook`, which run its
 * `mcp` and `ai-hook` verbs) into `dir`: sh scripts that run the bundle with
 * the Deno running this build and the project's deno.json.
 */
export async function install(out: string, dir: string): Promise<string[]> {
  await Deno.mkdir(dir, { recursive: true });
  const deno = [Deno.execPath(), "run", "-A", "--quiet"];
  const main = `${out}/main.js`;
  // A light verb's module imports nothing (scripts/build.ts bundles it whole): it runs without
  // the project's deno.json, which costs a one-shot ~2 ms to find and load. The others import
  // the source tree and its npm packages, which need it.
  const command = (flags: string[], verb: readonly string[]) => {
    const config = flags === LIGHT_FLAGS ? "--no-config" : `--config=${ROOT}deno.json`;
    return `exec ${[...deno, config, ...flags, main, ...verb].map(shQuote).join(" ")} "$@"`;
  };
  const heavy = heavyNames();
  const written: string[] = [];
  for (
    const [name, verb] of [["paneflow", []], ["paneflow-mcp", ["mcp"]], ["paneflow-ai-hook", [
      "ai-hook",
    ]]] as const
  ) {
    const path = `${dir}/${name}`;
    const lines = [`#!/bin/sh`, `# ${name}: the bundled CLI of ${JSON.stringify(ROOT)} (deno task install)`];
    if (verb.length) lines.push(command(heavy.includes(verb[0]) ? [] : LIGHT_FLAGS, verb));
    else {
      lines.push(
        `case "$1" in`,
        `  serve) ${command(SERVE_FLAGS, verb)} ;;`,
        `  ${heavy.join("|")}) ${command([], verb)} ;;`,
        "esac",
        command(LIGHT_FLAGS, verb),
      );
    }
    const script = `${lines.join("\n")}\n`;
    await Deno.writeTextFile(`${path}.tmp`, script, { mode: 0o755 });
    await Deno.rename(`${path}.tmp`, path);
    written.push(path);
  }
  return written;
}

async function main(argv: string[]): Promise<void> {
  const values = parseOptions(argv, {
    out: { type: "string" },
    install: { type: "boolean", default: false },
  }, USAGE);
  if (!values) return;
  const out = resolve(values.out ? fromCaller(values.out) : `${ROOT}dist/cli`);
  await build(out);
  console.error(`Built ${out}/main.js`);
  if (!values.install) return;
  const home = Deno.env.get("HOME") ?? "/";
  const dir = resolve(fromCaller(Deno.env.get("PANEFLOW_INSTALL_DIR") ?? `${home}/.local/bin`));
  for (const path of await install(out, dir)) console.error(`Installed ${path}`);
  const onPath = (Deno.env.get("PATH") ?? "").split(":").includes(dir);
  if (!onPath) console.error(`${dir} is not on your PATH; add it to run paneflow by name.`);
}

if (import.meta.main) await runScript("build", main);
