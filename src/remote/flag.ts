/**
 * The global `--host <name|ssh://…>` flag: taken out of argv (before the
 * verb, or among its options before `--`) and handed to the client through
 * `PANEFLOW_HOST`, so every client verb runs against a remote host unchanged.
 * No dependencies: main.ts imports this.
 *
 * @module
 */

/**
 * Verbs that run on this machine only: `--host` is refused there. (`flow` runs
 * from this machine; each step names its machine with `host = "<name>"`.)
 */
export const LOCAL_ONLY = new Set(["serve", "relay", "ai-hook", "hooks", "help", "web", "flow"]);

/** `argv` without its `--host` flag, and the flag's value; throws on a missing value. */
export function takeHostFlag(argv: string[]): { host: string | null; argv: string[] } {
  let host: string | null = null;
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (a === "--host" || a === "-H") {
      const v = argv[i + 1];
      if (v === undefined || v === "" || v.startsWith("-")) {
        throw new Error(`${a} needs a value: a name from the config's "hosts" or ssh://[user@]host[:port]`);
      }
      host = v;
      i++;
    } else if (a.startsWith("--host=")) {
      host = a.slice("--host=".length);
      if (!host) throw new Error(`--host needs a value`);
    } else {
      out.push(a);
    }
  }
  return { host, argv: out };
}
