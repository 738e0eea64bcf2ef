/**
 * Which agent family a process is, from its argv: `claude`, `codex`,
 * `opencode`, `gemini`, `qwen`, `copilot`, also when run through node/bun/deno or a wrapper
 * script path.
 *
 * @module
 */

/** Agent families paneflow knows. */
export const FAMILIES = ["claude", "codex", "opencode", "gemini", "qwen", "copilot"] as const;
/** One of {@link FAMILIES}. */
export type Family = (typeof FAMILIES)[number];

const RUNTIMES = /^(node|nodejs|bun|deno|npx|python3?|env)$/;
const PATTERNS: [Family, RegExp][] = [
  ["claude", /(^|\/)(claude|claude-code)(\.js|\.mjs|\.exe)?$|@anthropic-ai\/claude-code\//],
  ["codex", /(^|\/)codex(\.js|\.mjs|\.exe)?$|@openai\/codex\//],
  ["opencode", /(^|\/)opencode(\.js|\.exe)?$|opencode-ai\//],
  ["gemini", /(^|\/)gemini(\.js|\.exe)?$|@google\/gemini-cli\//],
  // `.bin/qwen` runs node, which relaunches `@qwen-code/qwen-code/cli.js` twice.
  ["qwen", /(^|\/)qwen(\.js|\.exe)?$|@qwen-code\/qwen-code\//],
  // `.bin/copilot` (npm-loader.js under node) spawns the native `@github/copilot-linux-x64/copilot`.
  ["copilot", /(^|\/)copilot(\.js|\.exe)?$|@github\/copilot(-[a-z0-9-]+)?\//],
];

function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

function familyOfWord(word: string): Family | null {
  for (const [family, re] of PATTERNS) if (re.test(word)) return family;
  return null;
}

/** The agent family of an argv, or null. Looks through runtimes like `node cli.js`. */
export function detectFamily(argv: string[]): Family | null {
  if (!argv.length) return null;
  const direct = familyOfWord(argv[0]);
  if (direct) return direct;
  if (RUNTIMES.test(basename(argv[0]))) {
    for (const a of argv.slice(1, 4)) {
      if (a.startsWith("-")) continue;
      const f = familyOfWord(a);
      if (f) return f;
    }
  }
  return null;
}
