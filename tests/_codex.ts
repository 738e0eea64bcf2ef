/**
 * The real Codex CLI for tests: `@openai/codex` installed once from npm into
 * the test cache, run as its native binary with an isolated CODEX_HOME whose
 * config.toml skips every first-run dialog and points Codex at a mock
 * Responses API (tests/_mock_openai.ts). See docs/agents.md, Tests.
 *
 * @module
 */
import { ensureNpmInstall, shQuote, testCacheDir, versionOf } from "./_npm_agent.ts";

/** The Codex version the fixtures and tests are written against. */
export const CODEX_VERSION = "0.169.0";

/** The env var holding the (fake) key of the mock provider. */
export const CODEX_KEY_VAR = "MOCK_OPENAI_KEY";

function nativeBinary(dir: string): string {
  const arch = Deno.build.arch === "aarch64" ? "aarch64" : "x86_64";
  const pkg = Deno.build.arch === "aarch64" ? "codex-linux-arm64" : "codex-linux-x64";
  return `${dir}/node_modules/@openai/${pkg}/vendor/${arch}-unknown-linux-musl/bin/codex`;
}

let installing: Promise<string> | null = null;

/** Installs `@openai/codex@<version>` when missing; returns the native `codex` binary. */
export function ensureCodex(version = CODEX_VERSION): Promise<string> {
  installing ??= ensureNpmInstall(
    `${testCacheDir()}/codex-${version}`,
    `@openai/codex@${version}`,
    async (dir) => {
      const bin = nativeBinary(dir);
      // A throwaway CODEX_HOME: `codex --version` would create ~/.codex otherwise.
      const env = { HOME: dir, CODEX_HOME: `${dir}/.codex-version-check`, PATH: "/usr/bin:/bin" };
      return (await versionOf([bin], env))?.includes(version) ? bin : null;
    },
  );
  installing.catch(() => (installing = null));
  return installing;
}

/** Options for {@link prepareCodexEnv}. */
export interface CodexEnvOptions {
  /** The mock's base URL, e.g. `http://127.0.0.1:1234/v1`. */
  baseUrl: string;
  /** Extra config.toml text (appended). */
  extraToml?: string;
}

/** An isolated Codex set-up. */
export interface CodexEnv {
  root: string;
  home: string;
  /** CODEX_HOME (holds config.toml, hooks.json, sessions/). */
  codexHome: string;
  /** The project dir (trusted in config.toml). */
  projectDir: string;
  env: Record<string, string>;
  /** `--env K=V` arguments for `paneflow new`. */
  envArgs: string[];
  cleanup(): Promise<void>;
}

/** config.toml for a dialog-free, daemon-free Codex against the mock. */
export function codexConfig(baseUrl: string, projectDir: string): string {
  return `model = "mock-model"
model_provider = "mock"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[model_providers.mock]
name = "Mock"
base_url = ${JSON.stringify(baseUrl)}
env_key = "${CODEX_KEY_VAR}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[projects.${JSON.stringify(projectDir)}]
trust_level = "trusted"

[tui]
screen_reader_detection_done = true

[features]
daemon_auto_start = false
in_app_updates = false

[analytics]
enabled = false
`;
}

/** Makes HOME, CODEX_HOME and a trusted project dir for one Codex run. */
export async function prepareCodexEnv(opts: CodexEnvOptions): Promise<CodexEnv> {
  // Not under /tmp: Codex refuses to create its PATH helpers under a temp dir and says so on stderr.
  const base = `${testCacheDir()}/runs`;
  await Deno.mkdir(base, { recursive: true });
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: base, prefix: "codex-" }));
  const home = `${root}/home`;
  const codexHome = `${home}/.codex`;
  const projectDir = `${root}/project`;
  for (const d of [home, codexHome, projectDir]) await Deno.mkdir(d, { recursive: true });
  await Deno.writeTextFile(
    `${codexHome}/config.toml`,
    codexConfig(opts.baseUrl, projectDir) + (opts.extraToml ?? ""),
  );
  const env: Record<string, string> = {
    HOME: home,
    CODEX_HOME: codexHome,
    [CODEX_KEY_VAR]: "sk-mock-000",
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
  };
  return {
    root,
    home,
    codexHome,
    projectDir,
    env,
    envArgs: Object.entries(env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
    cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}),
  };
}

/** The shell command that starts Codex (`bin` plus `args`). */
export function codexCommand(bin: string, args: string[] = []): string {
  return [bin, ...args].map(shQuote).join(" ");
}

/** Codex's idle screen: the input line and its footer, no busy line. */
export function isCodexIdle(screen: string): boolean {
  return /^› /m.test(screen) && /\? for shortcuts/.test(screen) && !/esc to interrupt/.test(screen);
}
