/**
 * The layout's rules, checked (tests/structure_test.ts runs this in the
 * test command; run it alone with `deno run -A scripts/structure.ts`):
 *
 * - no import circles among `src/` modules (type-only imports count too: a
 *   circle of types is still two modules that cannot be understood apart;
 *   the web page's `.js` modules count too, and the page's loader could not
 *   link a circle);
 * - no module over 600 lines (`.ts` and `.js`);
 * - no named function in `src/` (tests aside) over 80 lines, measured by a
 *   `deno lint` plugin (scripts/function_length.ts) so that strings and
 *   comments cannot fool the count, except the few in `LONG_FUNCTIONS`, each
 *   with its reason; an entry that no longer matches is itself a problem;
 * - at most 10 modules directly in `src/server/`;
 * - no stray files at the root;
 * - the folders' layers: `src/core/` (what every feature stands on) imports
 *   only `core/`, `spec/`, `wire/` and `src/`'s root modules; `spec/` only
 *   itself; `wire/` only `spec/`; `client/` only `wire/` and `spec/`; the root
 *   modules only `spec/`; `src/server/` (the composition root) is imported by
 *   nothing but `src/verbs/serve.ts` and `src/verbs/_flow_embedded.ts` (the
 *   embedded host of `flow run`); and nothing imports `src/verbs/` but verbs;
 * - no circles among the folders either (a feature that needs another's
 *   part gets it through a narrow interface, or the part moves down).
 *
 * @module
 */

const ROOT = new URL("../", import.meta.url).pathname;
const MAX_LINES = 600;
/** Lines a named function, method or arrow function assigned to a name may span. */
export const MAX_FUNCTION_LINES = 80;
/**
 * Functions allowed over `MAX_FUNCTION_LINES` for now, as `"<path>: <name>"`
 * (the name as scripts/function_length.ts gives it), each with its reason.
 */
export const LONG_FUNCTIONS: Record<string, string> = {
  "src/agents/opencode_plugin.ts: opencodePluginSource":
    "one template literal: the plugin file opencode loads, kept whole so it reads as that file",
};
const MAX_SERVER_MODULES = 10;
const ROOT_FILES = new Set([
  ".ci",
  ".git",
  ".github",
  ".gitignore",
  "README.md",
  "bench",
  "deno.json",
  "deno.lock",
  "docs",
  "examples",
  "install.sh",
  "main.ts",
  "node_modules",
  "scripts",
  "src",
  "tests",
]);

/** Every `.ts` and `.js` module under `dir` (tests included when `tests`): the web page's modules count too. */
export function modules(dir: string, tests = false): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...modules(path, tests));
    else if (/\.[tj]s$/.test(e.name) && (tests || !e.name.endsWith("_test.ts"))) out.push(path);
  }
  return out.sort();
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"|import\(\s*"(\.[^"]+)"\s*\)/g;

/** The relative imports of a module, resolved to paths. */
export function importsOf(path: string, text: string): string[] {
  const base = new URL(`file://${path}`);
  const out = new Set<string>();
  for (const m of text.matchAll(IMPORT)) out.add(new URL(m[1] ?? m[2], base).pathname);
  return [...out];
}

/** Strongly connected components with more than one module (or a self-import). */
export function circles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

/** The folders each layer may import besides its own (a folder not listed: any but server/ and verbs/). */
const LAYERS: Record<string, readonly string[]> = {
  "": ["spec"],
  spec: [""],
  wire: ["spec"],
  client: ["wire", "spec", ""],
  core: ["spec", "wire", ""],
};
/** The modules outside src/server/ that may import it: the host's entry points. */
const SERVER_ENTRIES = new Set(["verbs/serve.ts", "verbs/_flow_embedded.ts"]);

/**
 * Imports that break the layers, one line each. `graph` maps a module's path
 * under `src` to the paths it imports (type-only imports included).
 */
export function layerProblems(graph: Map<string, string[]>, src: string): string[] {
  const out: string[] = [];
  const under = (p: string) => p.slice(src.length + 1);
  const folder = (p: string) => under(p).includes("/") ? under(p).split("/")[0] : "";
  const name = (f: string) => f === "" ? "src/'s root modules" : `${f}/`;
  for (const [from, imports] of graph) {
    const a = folder(from);
    for (const to of imports) {
      if (!to.startsWith(`${src}/`)) continue;
      const b = folder(to);
      if (a === b) continue;
      const what = `src/${under(from)} imports src/${under(to)}`;
      if (b === "server" && !SERVER_ENTRIES.has(under(from))) {
        out.push(
          `${what}: src/server/ is the composition root, imported only by ${
            [...SERVER_ENTRIES].map((e) => `src/${e}`).join(" and ")
          }`,
        );
      } else if (b === "verbs" && a !== "") {
        out.push(`${what}: only verbs import src/verbs/`);
      } else if (a in LAYERS && !LAYERS[a].includes(b)) {
        const may = [a, ...LAYERS[a]].map(name).join(", ");
        out.push(`${what}: ${name(a)} may import only ${may}`);
      }
    }
  }
  return out;
}

/**
 * The folders of `src/` that import each other in a circle (a module's folder:
 * its first path part; `src/`'s root modules are small single-purpose modules,
 * not a folder, and their module circles are found by {@link circles}).
 */
export function folderCircles(graph: Map<string, string[]>, src: string): string[][] {
  const folder = (p: string) => {
    const parts = p.slice(src.length + 1).split("/");
    return parts.length > 1 ? parts[0] : "";
  };
  const folders = new Map<string, Set<string>>();
  for (const [from, imports] of graph) {
    const a = folder(from);
    if (a === "") continue;
    const set = folders.get(a) ?? folders.set(a, new Set()).get(a)!;
    for (const to of imports) {
      const b = to.startsWith(`${src}/`) ? folder(to) : "";
      if (b !== "" && b !== a) set.add(b);
    }
  }
  return circles(new Map([...folders].map(([f, to]) => [f, [...to]])));
}

/**
 * The named functions in `paths` over `MAX_FUNCTION_LINES` and not in
 * `allowed`, and the entries of `allowed` among `paths` that match nothing
 * over the cap, as one line each. Paths in the lines are relative to `root`.
 */
export async function longFunctions(
  paths: string[],
  opts: { root: string; allowed: Record<string, string> },
): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "paneflow-structure-" });
  try {
    const plugin = new URL("./function_length.ts", import.meta.url).href;
    const config = `${dir}/deno.json`;
    // No built-in rule: only the plugin's.
    await Deno.writeTextFile(config, JSON.stringify({ lint: { plugins: [plugin], rules: { tags: [] } } }));
    const lint = await new Deno.Command(Deno.execPath(), {
      args: ["lint", "--json", "--config", config, ...paths],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const report = JSON.parse(new TextDecoder().decode(lint.stdout)) as {
      diagnostics: { filename: string; code: string; message: string; range: { start: { line: number } } }[];
      errors: { file_path: string; message: string }[];
    };
    const out: string[] = report.errors.map((e) => `cannot parse ${e.file_path}: ${e.message}`);
    const seen = new Set<string>();
    for (const d of report.diagnostics) {
      if (d.code !== "paneflow/function-length") continue;
      const [name, lines] = d.message.split("\t");
      const file = new URL(d.filename).pathname.slice(opts.root.length);
      const key = `${file}: ${name}`;
      seen.add(key);
      if (key in opts.allowed) continue;
      out.push(
        `${file}:${d.range.start.line} function ${name} has ${lines} lines (at most ${MAX_FUNCTION_LINES})`,
      );
    }
    const files = new Set(paths.map((p) => p.slice(opts.root.length)));
    for (const key of Object.keys(opts.allowed)) {
      if (files.has(key.slice(0, key.indexOf(": "))) && !seen.has(key)) {
        out.push(`LONG_FUNCTIONS lists "${key}", which is no longer over ${MAX_FUNCTION_LINES} lines`);
      }
    }
    return out;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Every broken rule, as one line each (empty: all hold). */
export async function problems(): Promise<string[]> {
  const out: string[] = [];
  const rel = (p: string) => p.slice(ROOT.length);
  const graph = new Map<string, string[]>();
  for (const path of modules(`${ROOT}src`)) {
    const text = Deno.readTextFileSync(path);
    graph.set(path, importsOf(path, text).filter((p) => !p.endsWith("_test.ts")));
  }
  for (const path of [...modules(`${ROOT}src`, true), `${ROOT}main.ts`]) {
    const lines = Deno.readTextFileSync(path).split("\n").length - 1;
    if (lines > MAX_LINES) out.push(`${rel(path)} has ${lines} lines (at most ${MAX_LINES})`);
  }
  out.push(...await longFunctions(modules(`${ROOT}src`), { root: ROOT, allowed: LONG_FUNCTIONS }));
  for (const scc of circles(graph)) out.push(`import circle: ${scc.map(rel).join(" <-> ")}`);
  out.push(...layerProblems(graph, `${ROOT}src`));
  for (const scc of folderCircles(graph, `${ROOT}src`)) {
    out.push(`folder circle: ${scc.map((f) => `src/${f}${f ? "/" : ""}`).join(" <-> ")}`);
  }
  const server = [...Deno.readDirSync(`${ROOT}src/server`)]
    .filter((e) => e.isFile && e.name.endsWith(".ts") && !e.name.endsWith("_test.ts"))
    .map((e) => e.name);
  if (server.length > MAX_SERVER_MODULES) {
    out.push(
      `src/server/ holds ${server.length} modules (at most ${MAX_SERVER_MODULES}): ${
        server.sort().join(", ")
      }`,
    );
  }
  // Build output and other ignored files are not strays.
  const ignored = new Set(
    Deno.readTextFileSync(`${ROOT}.gitignore`).split("\n").map((l) => l.trim().replace(/^\/|\/$/g, "")),
  );
  for (const e of Deno.readDirSync(ROOT)) {
    if (!ROOT_FILES.has(e.name) && !ignored.has(e.name)) out.push(`stray file at the root: ${e.name}`);
  }
  return out;
}

if (import.meta.main) {
  const found = await problems();
  for (const p of found) console.error(p);
  Deno.exit(found.length ? 1 : 0);
}
