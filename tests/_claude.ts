/**
 * The real Claude Code for tests: installed once from npm into a cache dir
 * outside the repo, and launched with an isolated config dir, HOME and
 * project dir that skip its first-run dialogs and point it at a mock API.
 *
 * @module
 */
import { ROOT, type TestHost, waitUntil } from "./_harness.ts";
import { ensureNpmInstall } from "./_npm_agent.ts";

/** The Claude Code version the fixtures and tests are written against. */
export const CLAUDE_CODE_VERSION = "2.1.328";

/** The fake key; Claude Code remembers approved custom keys by their last 20 chars. */
export const FAKE_API_KEY = "sk-ant-api03-paneflow-test-key-0000000000000000000000000000";

/** Where Claude Code is installed: `$PANEFLOW_TEST_CACHE` or `~/.cache/paneflow-test`, then `claude-code-<version>`. */
export function claudeInstallDir(version = CLAUDE_CODE_VERSION): string {
  const base = Deno.env.get("PANEFLOW_TEST_CACHE") ??
    `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache`}/paneflow-test`;
  return `${base}/claude-code-${version}`;
}

function platformPackage(): string {
  const arch = Deno.build.arch === "aarch64" ? "arm64" : "x64";
  const os = Deno.build.os === "darwin" ? "darwin" : "linux";
  let musl = false;
  if (os === "linux") {
    try {
      musl = Deno.statSync("/lib/ld-musl-x86_64.so.1").isFile ||
        Deno.statSync("/lib/ld-musl-aarch64.so.1").isFile;
    } catch { /* glibc */ }
  }
  return `@anthropic-ai/claude-code-${os}-${arch}${musl ? "-musl" : ""}`;
}

async function versionOf(bin: string): Promise<string | null> {
  try {
    const out = await new Deno.Command(bin, {
      args: ["--version"],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      env: { DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" },
    }).output();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
  } catch {
    return null;
  }
}

/** The native binary inside an install dir, if it is there and runs. */
async function findBinary(dir: string, version: string): Promise<string | null> {
  // The platform package holds the real binary; the wrapper's bin/claude.exe is
  // a placeholder until its postinstall copies the binary over it.
  const candidates = [
    `${dir}/node_modules/${platformPackage()}/claude`,
    `${dir}/node_modules/@anthropic-ai/claude-code/bin/claude.exe`,
  ];
  for (const bin of candidates) {
    const v = await versionOf(bin);
    if (v?.startsWith(version)) return bin;
  }
  return null;
}

let installing: Promise<string> | null = null;

/**
 * Installs `@anthropic-ai/claude-code@<version>` with npm into
 * {@link claudeInstallDir} when it is missing (about 10 s, ~370 MB) and returns
 * the path of the `claude` binary. Safe to call from several tests.
 */
export function ensureClaude(version = CLAUDE_CODE_VERSION): Promise<string> {
  installing ??= ensureNpmInstall(
    claudeInstallDir(version),
    `@anthropic-ai/claude-code@${version}`,
    (dir) => findBinary(dir, version),
  );
  installing.catch(() => (installing = null));
  return installing;
}

/** Claude Code hook entries: event name to matcher groups, as in settings.json. */
export type ClaudeHooks = Record<
  string,
  { matcher?: string; hooks: { type: "command"; command: string; timeout?: number }[] }[]
>;

/** Options for {@link prepareClaudeEnv}. */
export interface ClaudeEnvOptions {
  /** The mock API's base URL (ANTHROPIC_BASE_URL). */
  baseUrl: string;
  /** Where to make the dirs (default: a new temp dir). */
  root?: string;
  /** Hook entries for settings.json (e.g. paneflow ai-hook commands). */
  hooks?: ClaudeHooks;
  /** settings.json `permissions.defaultMode` (default "default", which asks before Bash). */
  permissionMode?: string;
  /** CLAUDE_CODE_MAX_RETRIES (default "0": an API error shows at once instead of ~3 min of retries). */
  maxRetries?: number;
  /** Extra settings.json keys. */
  settings?: Record<string, unknown>;
  /** Extra environment variables. */
  env?: Record<string, string>;
}

/** An isolated Claude Code set-up. */
export interface ClaudeEnv {
  /** The temp root holding the dirs below. */
  root: string;
  /** CLAUDE_CONFIG_DIR (holds .claude.json and settings.json). */
  configDir: string;
  /** HOME for the claude process. */
  home: string;
  /** The project dir to run claude in (trust dialog already accepted). */
  projectDir: string;
  /** The environment to launch claude with. */
  env: Record<string, string>;
  /** `--env K=V` arguments for `paneflow new`. */
  envArgs: string[];
  /** Removes `root`. */
  cleanup(): Promise<void>;
}

/**
 * Makes a config dir, HOME and project dir for one claude run: onboarding
 * done, the fake key approved, the project trusted, permission dialogs on,
 * and returns the environment that points claude at `baseUrl`.
 */
export async function prepareClaudeEnv(opts: ClaudeEnvOptions): Promise<ClaudeEnv> {
  const root = await Deno.realPath(opts.root ?? await Deno.makeTempDir({ prefix: "pf-claude-" }));
  const home = `${root}/home`;
  const configDir = `${home}/.claude`;
  const projectDir = `${root}/project`;
  for (const d of [home, configDir, projectDir]) await Deno.mkdir(d, { recursive: true });

  const project = {
    allowedTools: [],
    hasTrustDialogAccepted: true,
    hasCompletedProjectOnboarding: true,
    projectOnboardingSeenCount: 1,
    hasClaudeMdExternalIncludesApproved: false,
    hasClaudeMdExternalIncludesWarningShown: false,
  };
  const globalConfig = {
    numStartups: 1,
    installMethod: "npm",
    autoUpdates: false,
    hasCompletedOnboarding: true,
    lastOnboardingVersion: CLAUDE_CODE_VERSION,
    lastReleaseNotesSeen: CLAUDE_CODE_VERSION,
    hasSeenTasksHint: true,
    // "Make auto mode your default permission mode?" (2.1.328 shows it on first start).
    hasSeenAutoDefaultNudge: true,
    hasSeenAutoDefaultNotice: true,
    // Skips the animated logo entrance.
    lastClawdEntranceVersion: CLAUDE_CODE_VERSION,
    // The official plugin marketplace would be fetched from the network.
    officialMarketplaceAutoInstallAttempted: true,
    officialMarketplaceAutoInstalled: false,
    officialMarketplaceAutoInstallFailReason: "policy_blocked",
    bypassPermissionsModeAccepted: false,
    customApiKeyResponses: { approved: [FAKE_API_KEY.slice(-20)], rejected: [] },
    projects: { [projectDir]: project },
  };
  const json = JSON.stringify(globalConfig, null, 2);
  // With CLAUDE_CONFIG_DIR set the global config lives in it; $HOME/.claude.json is
  // the place without it. Write both so either reading finds it.
  await Deno.writeTextFile(`${configDir}/.claude.json`, json);
  await Deno.writeTextFile(`${home}/.claude.json`, json);

  const settings: Record<string, unknown> = {
    permissions: { defaultMode: opts.permissionMode ?? "default" },
    ...opts.settings,
  };
  if (opts.hooks) settings.hooks = opts.hooks;
  await Deno.writeTextFile(`${configDir}/settings.json`, JSON.stringify(settings, null, 2));

  const env: Record<string, string> = {
    HOME: home,
    CLAUDE_CONFIG_DIR: configDir,
    ANTHROPIC_BASE_URL: opts.baseUrl,
    ANTHROPIC_API_KEY: FAKE_API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: "1",
    CLAUDE_CODE_MAX_RETRIES: String(opts.maxRetries ?? 0),
    ...opts.env,
  };
  return {
    root,
    configDir,
    home,
    projectDir,
    env,
    envArgs: Object.entries(env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
    cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}),
  };
}

import { shQuote } from "../src/sh.ts";

export { shQuote };

/**
 * The shell command that runs this checkout's CLI (`paneflow`), e.g. for hook
 * entries: `${paneflowCommand()} ai-hook Stop`.
 */
export function paneflowCommand(): string {
  return [Deno.execPath(), "run", "-A", "--quiet", `--config=${ROOT}deno.json`, `${ROOT}main.ts`]
    .map(shQuote).join(" ");
}

/** Options for {@link launchClaude}. */
export interface LaunchOptions extends Omit<ClaudeEnvOptions, "root"> {
  /** The pane name (default "claude"). */
  name?: string;
  /** Extra claude arguments. */
  args?: string[];
  /** How long to wait for the empty composer (default 20 s). */
  readyTimeoutMs?: number;
}

/** A claude running in a pane. */
export interface LaunchedClaude {
  /** The pane name (a selector for the CLI). */
  pane: string;
  surfaceId: number;
  /** The claude binary. */
  bin: string;
  /** Its isolated dirs and environment. */
  setup: ClaudeEnv;
  /** Milliseconds from `paneflow new` to the empty composer on screen. */
  startupMs: number;
}

/** The screen shows Claude Code's empty, idle composer. */
export function isIdleComposer(screen: string): boolean {
  return /^❯\s*$/m.test(screen) && screen.includes("? for shortcuts");
}

/**
 * Starts the real claude in a new pane of `host` (`paneflow new -c <claude>
 * --pane-name <name> --cwd <project> --env ...`) and waits until its empty
 * composer shows. Call `setup.cleanup()` when done.
 */
export async function launchClaude(host: TestHost, opts: LaunchOptions): Promise<LaunchedClaude> {
  const bin = await ensureClaude();
  const setup = await prepareClaudeEnv(opts);
  const name = opts.name ?? "claude";
  const command = [bin, ...(opts.args ?? [])].map(shQuote).join(" ");
  const t0 = Date.now();
  const created = await host.json<{ surface_id: number }>([
    "new",
    "-c",
    command,
    "--pane-name",
    name,
    "--cwd",
    setup.projectDir,
    ...setup.envArgs,
  ]);
  await waitUntil(`claude's empty composer in pane ${name}`, async () => {
    const r = await host.cli(["read", name, "--raw"]);
    if (r.code !== 0) throw new Error(`read ${name}: ${r.stderr}`);
    return isIdleComposer(r.stdout);
  }, { timeoutMs: opts.readyTimeoutMs ?? 20_000, intervalMs: 50 });
  return { pane: name, surfaceId: created.surface_id, bin, setup, startupMs: Date.now() - t0 };
}
