/**
 * Fan-out across machines: run one query against this machine's host and
 * every named host of the config, in parallel; a host that cannot be reached
 * is reported with why, never fatal to the others.
 *
 * @module
 */
import { Client } from "../client/client.ts";
import { describeError } from "../errors.ts";
import { socketPath } from "../paths.ts";
import { namedHosts } from "../client/named_hosts.ts";

/** One host's answer, or why there is none. */
export type HostAnswer<T> = { host: string; ok: true; value: T } | { host: string; ok: false; error: string };

/** Runs `fn` against `local` and every named host at once; answers in that order. */
export async function eachHost<T>(
  fn: (client: Client, host: string) => Promise<T>,
): Promise<HostAnswer<T>[]> {
  const hosts = await namedHosts();
  const targets = [
    { label: "local", address: socketPath() },
    ...hosts.map((h) => ({ label: h.label, address: h.label })),
  ];
  return await Promise.all(targets.map(async ({ label, address }): Promise<HostAnswer<T>> => {
    let client: Client | null = null;
    try {
      client = await Client.connect(address);
      return { host: label, ok: true, value: await fn(client, label) };
    } catch (e) {
      return { host: label, ok: false, error: describeError(e).message };
    } finally {
      client?.close();
    }
  }));
}

/** Prints one line per unreachable host on stderr; returns the exit code (1 when any was). */
export function reportUnreachable(answers: HostAnswer<unknown>[]): number {
  let code = 0;
  for (const a of answers) {
    if (!a.ok) {
      console.error(`paneflow: ${a.error}`);
      code = 1;
    }
  }
  return code;
}
