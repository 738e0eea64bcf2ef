/**
 * The real opencode for tests: `opencode-ai` installed once from npm into the
 * test cache, run as its native binary with an isolated HOME, fully offline:
 * its models catalog comes from a file (`OPENCODE_MODELS_PATH`, a
 * models.dev-shaped `{provider: {models: {...}}}` naming one model), the
 * built-in `openai` provider points at the Responses API mock
 * (tests/_mock_openai.ts) through `provider.openai.options.baseURL`, and every
 * other destination goes to a closed proxy port.
 *
 * @module
 */
import { ensureNpmInstall, shQuote, testCacheDir, verifiedOnce, versionOf } from "./_npm_agent.ts";

/** The opencode version the tests are written against. */
export const OPENCODE_VERSION = "1.18.33";

function nativeBinary(dir: string): string {
  const pkg = Deno.build.arch === "aarch64" ? "opencode-linux-arm64" : "opencode-linux-x64";
  return `${dir}/node_modules/${pkg}/bin/opencode`;
}

let installing: Promise<string> | null = null;

/** Installs `opencode-ai@<version>` when missing; returns the native `opencode` binary. */
export function ensureOpencode(version = OPENCODE_VERSION): Promise<string> {
  installing ??= ensureNpmInstall(
    `${testCacheDir()}/opencode-${version}`,
    `opencode-ai@${version}`,
    (dir) => {
      const bin = nativeBinary(dir);
      const env = { HOME: `${dir}/.version-check`, PATH: "/usr/bin:/bin", OPENCODE_DISABLE_AUTOUPDATE: "1" };
      return verifiedOnce(
        dir,
        "opencode-ai",
        version,
        bin,
        async () => (await versionOf([bin], env))?.includes(version) ?? false,
      );
    },
  );
  installing.catch(() => (installing = null));
  return installing;
}

/** An isolated opencode set-up. */
export interface OpencodeEnv {
  root: string;
  home: string;
  projectDir: string;
  /** `$HOME/.config/opencode/opencode.json`. */
  configFile: string;
  env: Record<string, string>;
  envArgs: string[];
  cleanup(): Promise<void>;
}

/** The model opencode is configured with (in the catalog and the config). */
export const OPENCODE_MODEL = "mock-model";

/** A models.dev-shaped catalog with the one model the config names. */
export function opencodeCatalog(): Record<string, unknown> {
  return {
    openai: {
      id: "openai",
      name: "OpenAI",
      env: ["OPENAI_API_KEY"],
      npm: "@ai-sdk/openai",
      doc: "mock",
      models: {
        [OPENCODE_MODEL]: {
          id: OPENCODE_MODEL,
          name: "Mock",
          attachment: false,
          reasoning: false,
          temperature: true,
          tool_call: true,
          release_date: "2025-01-01",
          last_updated: "2025-01-01",
          modalities: { input: ["text"], output: ["text"] },
          open_weights: false,
          cost: { input: 0, output: 0 },
          limit: { context: 128000, output: 8192 },
        },
      },
    },
  };
}

/** Makes HOME (with opencode.json), the catalog file and a project dir for one opencode run. */
export async function prepareOpencodeEnv(
  opts: { baseUrl: string; config?: Record<string, unknown> },
): Promise<OpencodeEnv> {
  const base = `${testCacheDir()}/runs`;
  await Deno.mkdir(base, { recursive: true });
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: base, prefix: "opencode-" }));
  const home = `${root}/home`;
  const projectDir = `${root}/project`;
  const configDir = `${home}/.config/opencode`;
  for (const d of [home, configDir, projectDir]) await Deno.mkdir(d, { recursive: true });
  // opencode installs `@opencode-ai/plugin` into every config dir and, once any plugin is configured,
  // waits for that install before it starts (~70 s of npm retries offline). A config dir whose
  // package-lock.json already lists its package.json's dependencies is not installed into again:
  // seed it as an earlier online start would have left it.
  const dep = { "@opencode-ai/plugin": "*" };
  await Deno.mkdir(`${configDir}/node_modules`, { recursive: true });
  await Deno.writeTextFile(`${configDir}/package.json`, JSON.stringify({ dependencies: dep }));
  await Deno.writeTextFile(
    `${configDir}/package-lock.json`,
    JSON.stringify({ packages: { "": { dependencies: dep } } }),
  );
  const catalog = `${root}/models.json`;
  await Deno.writeTextFile(catalog, JSON.stringify(opencodeCatalog()));
  const configFile = `${configDir}/opencode.json`;
  await Deno.writeTextFile(
    configFile,
    JSON.stringify(
      {
        autoupdate: false,
        share: "disabled",
        model: `openai/${OPENCODE_MODEL}`,
        small_model: `openai/${OPENCODE_MODEL}`,
        provider: { openai: { options: { baseURL: opts.baseUrl, apiKey: "sk-mock-000" } } },
        ...opts.config,
      },
      null,
      2,
    ),
  );
  const env: Record<string, string> = {
    HOME: home,
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
    OPENCODE_MODELS_PATH: catalog,
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENAI_API_KEY: "sk-mock-000",
    // Nothing but the mock: any other destination fails fast at a closed port.
    HTTPS_PROXY: "http://127.0.0.1:9",
    HTTP_PROXY: "http://127.0.0.1:9",
    NO_PROXY: "127.0.0.1",
  };
  return {
    root,
    home,
    projectDir,
    configFile,
    env,
    envArgs: Object.entries(env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
    cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}),
  };
}

/** The shell command that starts opencode (`bin` plus `args`). */
export function opencodeCommand(bin: string, args: string[] = []): string {
  return [bin, ...args].map(shQuote).join(" ");
}

/** opencode's input box is drawn (its `╹▀▀▀` bottom edge), no turn runs and no dialog is open. */
export function isOpencodeIdle(screen: string): boolean {
  const lines = screen.split("\n").map((l) => l.trimEnd());
  const last = lines.findLast((l) => l.trim() !== "") ?? "";
  return lines.some((l) => /^\s*╹▀{10,}/.test(l)) && !/interrupt/.test(last) &&
    !/Permission required/.test(screen);
}
