/**
 * What the screen-capture scripts (agents_capture.ts, agents_capture_more.ts)
 * share: writing a captured screen into the fixtures, and typing a prompt
 * with a bare Enter (no submit transaction: the screens are what the rules
 * learn from).
 *
 * @module
 */
import { ok, waitScreen } from "../tests/_agents.ts";
import { type TestHost, waitUntil } from "../tests/_harness.ts";

/** A writer of `<fixtures>/<dir>/<name>.txt`. */
export function saver(fixtures: string): (dir: string, name: string, text: string) => Promise<void> {
  return async (dir, name, text) => {
    await Deno.mkdir(`${fixtures}/${dir}`, { recursive: true });
    await Deno.writeTextFile(`${fixtures}/${dir}/${name}.txt`, text);
    console.log(`wrote ${dir}/${name}.txt`);
  };
}

/** Types a prompt and presses Enter, then waits until the mock has seen one more turn. */
export async function type(host: TestHost, pane: string, text: string, turns: () => number): Promise<void> {
  const before = turns();
  await ok(host, ["send", pane, text]);
  await waitScreen(host, pane, `"${text}" in the input`, (s) => s.includes(text.slice(0, 30)), 5000);
  await new Promise((r) => setTimeout(r, 200));
  const { surface_id } = await host.json<{ surface_id: number }>(["status", pane, "--json"]);
  await host.call("surface.send_text", { surface_id, text: "\r" });
  await waitUntil(`"${text}" to reach the mock`, () => turns() > before, { timeoutMs: 10_000 });
}
