/**
 * The real GitHub Copilot CLI for tests: `@github/copilot` installed once from
 * npm into the test cache (its optional `@github/copilot-linux-x64` ships the
 * native binary, so nothing is downloaded), run with an isolated HOME whose
 * `~/.copilot/config.json` trusts the project folder, pointed at
 * tests/_mock_chat.ts through its bring-your-own-key provider variables (no
 * GitHub login). See docs/agents.md, GitHub Copilot CLI and Crush.
 *
 * @module
 */
import { ensureNpmInstall, shQuote, testCacheDir, verifiedOnce, versionOf } from "./_npm_agent.ts";

/** The Copilot CLI version the fixtures are written against. */
export const COPILOT_VERSION = "1.0.102";

let installing: Promise<string> | null = null;

/** Installs `@github/copilot@<version>` when missing; returns its `.bin/copilot`. */
export function ensureCopilot(version = COPILOT_VERSION): Promise<string> {
  installing ??= ensureNpmInstall(
    `${testCacheDir()}/copilot-${version}`,
    `@github/copilot@${version}`,
    (dir) => {
      const bin = `${dir}/node_modules/.bin/copilot`;
      return verifiedOnce(
        dir,
        "@github/copilot",
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

/** An isolated Copilot CLI set-up. */
export interface CopilotEnv {
  root: string;
  home: string;
  projectDir: string;
  env: Record<string, string>;
  envArgs: string[];
  cleanup(): Promise<void>;
}

/** Makes HOME (with `.copilot/config.json` trusting the project) and a project dir for one run. */
export async function prepareCopilotEnv(opts: { baseUrl: string }): Promise<CopilotEnv> {
  const base = `${testCacheDir()}/runs`;
  await Deno.mkdir(base, { recursive: true });
  const root = await Deno.realPath(await Deno.makeTempDir({ dir: base, prefix: "copilot-" }));
  const home = `${root}/home`;
  const projectDir = `${root}/project`;
  const tmp = `${root}/tmp`;
  for (const d of [home, `${home}/.copilot`, projectDir, tmp]) await Deno.mkdir(d, { recursive: true });
  // Skips the "Confirm folder trust" dialog.
  await Deno.writeTextFile(`${home}/.copilot/config.json`, JSON.stringify({ trustedFolders: [projectDir] }));
  const env: Record<string, string> = {
    HOME: home,
    TMPDIR: tmp,
    COPILOT_OFFLINE: "true",
    COPILOT_AUTO_UPDATE: "false",
    COPILOT_PROVIDER_BASE_URL: opts.baseUrl,
    COPILOT_PROVIDER_API_KEY: "sk-mock-000",
    COPILOT_MODEL: "mock-model",
    // Without these two the TUI warns that the model is not in its catalog.
    COPILOT_PROVIDER_MAX_PROMPT_TOKENS: "128000",
    COPILOT_PROVIDER_MAX_OUTPUT_TOKENS: "8192",
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
    COLORTERM: "truecolor",
    CI: "false",
  };
  return {
    root,
    home,
    projectDir,
    env,
    envArgs: Object.entries(env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
    cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}),
  };
}

/** The shell command that starts Copilot CLI. */
export function copilotCommand(bin: string, args: string[] = []): string {
  return [bin, ...args].map(shQuote).join(" ");
}

/** Copilot CLI's idle screen: the footer of an empty input, not working, no dialog. */
export function isCopilotIdle(screen: string): boolean {
  return /· \/ commands · \? help/.test(screen) && !/Working|Do you want to run this command\?/.test(screen);
}
