/**
 * The real Gemini CLI for tests: `@google/gemini-cli` installed once from
 * npm into the test cache, run with node and an isolated HOME whose
 * `.gemini/settings.json` skips the folder-trust and auth dialogs; the API
 * is tests/_mock_gemini.ts (GOOGLE_GEMINI_BASE_URL). See docs/agents.md, Tests.
 *
 * @module
 */
import { ensureNpmInstall, shQuote, testCacheDir, verifiedOnce, versionOf } from "./_npm_agent.ts";

/** The Gemini CLI version the fixtures and tests are written against. */
export const GEMINI_VERSION = "0.61.0";

let installing: Promise<string> | null = null;

/** Installs `@google/gemini-cli@<version>` when missing; returns its `bundle/gemini.js`. */
export function ensureGemini(version = GEMINI_VERSION): Promise<string> {
  installing ??= ensureNpmInstall(
    `${testCacheDir()}/gemini-cli-${version}`,
    `@google/gemini-cli@${version}`,
    (dir) => {
      const js = `${dir}/node_modules/@google/gemini-cli/bundle/gemini.js`;
      return verifiedOnce(
        dir,
        "@google/gemini-cli",
        version,
        js,
        async () =>
          (await versionOf(["node", js], { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: "/tmp" }))
            ?.includes(version) ?? false,
      );
    },
  );
  installing.catch(() => (installing = null));
  return installing;
}

/** Options for {@link prepareGeminiEnv}. */
export interface GeminiEnvOptions {
  /** The mock's URL (GOOGLE_GEMINI_BASE_URL). */
  url: string;
  /** Set COLORTERM=truecolor (the input box is framed by half-block rows then). Default true. */
  truecolor?: boolean;
  /** Extra settings.json keys. */
  settings?: Record<string, unknown>;
}

/** An isolated Gemini CLI set-up. */
export interface GeminiEnv {
  root: string;
  home: string;
  /** `$HOME/.gemini`. */
  geminiDir: string;
  projectDir: string;
  env: Record<string, string>;
  envArgs: string[];
  cleanup(): Promise<void>;
}

/** settings.json without dialogs, update checks or telemetry. */
export function geminiSettings(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    model: { name: "gemini-2.5-flash" },
    ...extra,
  };
}

/** Makes HOME (with `.gemini/settings.json`) and a project dir for one Gemini run. */
export async function prepareGeminiEnv(opts: GeminiEnvOptions): Promise<GeminiEnv> {
  const base = `${testCacheDir()}/runs`;
  await Deno.mkdir(base, { recursive: true });
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: base, prefix: "gemini-" }));
  const home = `${root}/home`;
  const geminiDir = `${home}/.gemini`;
  const projectDir = `${root}/project`;
  // Gemini CLI writes a report of every failed API call to the temp dir: keep them in the run's root.
  const tmp = `${root}/tmp`;
  for (const d of [home, geminiDir, projectDir, tmp]) await Deno.mkdir(d, { recursive: true });
  await Deno.writeTextFile(
    `${geminiDir}/settings.json`,
    JSON.stringify(geminiSettings(opts.settings), null, 2),
  );
  const env: Record<string, string> = {
    HOME: home,
    TMPDIR: tmp,
    GEMINI_API_KEY: "mock-gemini-key",
    GOOGLE_GEMINI_BASE_URL: opts.url,
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
    // Gemini CLI runs headless (and exits 42 with no prompt) when CI or
    // GITHUB_ACTIONS is "true", even on a terminal; CI runners set CI=true.
    CI: "false",
    GITHUB_ACTIONS: "false",
  };
  if (opts.truecolor !== false) env.COLORTERM = "truecolor";
  return {
    root,
    home,
    geminiDir,
    projectDir,
    env,
    envArgs: Object.entries(env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
    cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}),
  };
}

/** The shell command that starts Gemini CLI. */
export function geminiCommand(js: string, args: string[] = []): string {
  return ["node", js, ...args].map(shQuote).join(" ");
}

/** Gemini CLI's idle screen: the empty input's placeholder, no spinner. */
export function isGeminiIdle(screen: string): boolean {
  return /^ > {3}Type your message/m.test(screen) && !/esc to cancel/.test(screen);
}
