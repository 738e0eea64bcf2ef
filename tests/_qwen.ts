/**
 * The real Qwen Code for tests: `@qwen-code/qwen-code` installed once from npm
 * into the test cache, run with an isolated HOME whose `.qwen/settings.json`
 * skips every dialog, update check and background request; the API is
 * tests/_mock_chat.ts (`OPENAI_BASE_URL`). See docs/agents.md, Tests.
 *
 * @module
 */
import { ensureNpmInstall, shQuote, testCacheDir, verifiedOnce, versionOf } from "./_npm_agent.ts";

/** The Qwen Code version the fixtures and tests are written against. */
export const QWEN_VERSION = "0.24.4";

let installing: Promise<string> | null = null;

/** Installs `@qwen-code/qwen-code@<version>` when missing; returns its `.bin/qwen`. */
export function ensureQwen(version = QWEN_VERSION): Promise<string> {
  installing ??= ensureNpmInstall(
    `${testCacheDir()}/qwen-code-${version}`,
    `@qwen-code/qwen-code@${version}`,
    (dir) => {
      const bin = `${dir}/node_modules/.bin/qwen`;
      return verifiedOnce(
        dir,
        "@qwen-code/qwen-code",
        version,
        bin,
        async () =>
          (await versionOf([bin], { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: "/tmp" }))
            ?.includes(version) ?? false,
      );
    },
  );
  installing.catch(() => (installing = null));
  return installing;
}

/** settings.json without dialogs, update checks, background requests or telemetry; approvals asked. */
export function qwenSettings(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    security: { auth: { selectedType: "openai" }, folderTrust: { enabled: false } },
    // `general.disableAutoUpdate` does not stop the `npm view` at start; this does.
    general: { enableAutoUpdate: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    model: { name: "mock-model" },
    // Both send requests of their own to the same endpoint after every turn.
    memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
    // The bundled ripgrep has no exec bit after `npm install`: a warning box at start without this.
    tools: { approvalMode: "default", useRipgrep: false },
    ui: { enableFollowupSuggestions: false, enableUserFeedback: false, enableWelcomeBack: false },
    ...extra,
  };
}

/** An isolated Qwen Code set-up. */
export interface QwenEnv {
  root: string;
  home: string;
  /** `$HOME/.qwen`. */
  qwenDir: string;
  projectDir: string;
  env: Record<string, string>;
  envArgs: string[];
  cleanup(): Promise<void>;
}

/** Makes HOME (with `.qwen/settings.json`) and a project dir for one Qwen Code run. */
export async function prepareQwenEnv(opts: { baseUrl: string }): Promise<QwenEnv> {
  const base = `${testCacheDir()}/runs`;
  await Deno.mkdir(base, { recursive: true });
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: base, prefix: "qwen-" }));
  const home = `${root}/home`;
  const qwenDir = `${home}/.qwen`;
  const projectDir = `${root}/project`;
  const tmp = `${root}/tmp`;
  for (const d of [home, qwenDir, projectDir, tmp]) await Deno.mkdir(d, { recursive: true });
  await Deno.writeTextFile(`${qwenDir}/settings.json`, JSON.stringify(qwenSettings(), null, 2));
  const env: Record<string, string> = {
    HOME: home,
    TMPDIR: tmp,
    OPENAI_API_KEY: "sk-mock-000",
    OPENAI_BASE_URL: opts.baseUrl,
    OPENAI_MODEL: "mock-model",
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
    COLORTERM: "truecolor",
    CI: "false",
  };
  return {
    root,
    home,
    qwenDir,
    projectDir,
    env,
    envArgs: Object.entries(env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
    cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}),
  };
}

/** The shell command that starts Qwen Code. */
export function qwenCommand(bin: string, args: string[] = []): string {
  return [bin, ...args].map(shQuote).join(" ");
}

/** Qwen Code's idle screen: the empty input's placeholder, no busy line, no dialog. */
export function isQwenIdle(screen: string): boolean {
  return /^> {3}Type your message/m.test(screen) &&
    !/esc to cancel|Waiting for user confirmation/.test(screen);
}
