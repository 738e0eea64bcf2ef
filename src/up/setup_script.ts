/**
 * The script a pane with `setup` runs before its program, and the mark that
 * tells a pane still in its setup from one running its program.
 *
 * @module
 */
import { shQuote } from "../sh.ts";

/** Marks the argv of a pane whose setup is still running. */
export const WRAPPER_MARK = "paneflow-setup-wrapper";

/**
 * The script a pane with `setup` runs: the setup in the pane's own PTY
 * (stdin from /dev/null, bounded by `timeout`), a warning when it fails or
 * times out, then `exec` of the program either way.
 */
export function setupScript(
  o: { setup: string; timeoutSecs: number; shell: string; command: string | null },
): string {
  const sh = shQuote(o.shell);
  const setup = shQuote(o.setup);
  const secs = o.timeoutSecs;
  return [
    `# ${WRAPPER_MARK}`,
    `printf '[paneflow] setup: %s\\n' ${setup}`,
    `if command -v timeout >/dev/null 2>&1; then timeout -k 5 ${secs} ${sh} -c ${setup} </dev/null; ` +
    `else ${sh} -c ${setup} </dev/null; fi`,
    `rc=$?`,
    `if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then printf '[paneflow] warning: setup timed out after ${secs}s; starting anyway\\n'`,
    `elif [ "$rc" -ne 0 ]; then printf '[paneflow] warning: setup failed (exit %s); starting anyway\\n' "$rc"`,
    `else printf '[paneflow] setup done\\n'; fi`,
    `unset rc`,
    o.command === null ? `exec ${sh}` : `exec ${sh} -c ${shQuote(o.command)}`,
  ].join("\n");
}
