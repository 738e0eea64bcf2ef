/**
 * The queue side of the CLI (`msg`, `agents`): finding the queue root and
 * reading, writing and waiting on its files. Loaded only by those verbs.
 *
 * @module
 */
import { Client } from "../client/client.ts";
import { CliFailure } from "../errors.ts";
import { socketPath } from "../paths.ts";
import { type Located, queueFiles, readQueue } from "./store.ts";

/** The queue root: --queue, else $PANEFLOW_QUEUE, else the host's (`queue.info`). */
export async function queueRoot(flag: string | undefined): Promise<string> {
  const given = flag ?? Deno.env.get("PANEFLOW_QUEUE");
  if (given) return given.startsWith("/") ? given : `${Deno.cwd()}/${given}`;
  const c = await Client.tryConnect(socketPath());
  if (c) {
    try {
      const r = await c.call("queue.info");
      if (r.root) return r.root;
    } finally {
      c.close();
    }
  }
  throw new CliFailure(
    "No queue root: give --queue <dir>, set PANEFLOW_QUEUE, or start the host with paneflow serve --queue <dir>",
  );
}

/** Every message under a root; problems go to stderr as file:line lines. */
export async function allMessages(root: string, quiet = false): Promise<Located[]> {
  const out: Located[] = [];
  for (const f of await queueFiles(root)) {
    const r = await readQueue(f);
    for (const p of r.problems) if (!quiet) console.error(`paneflow: ${p.file}:${p.line}: ${p.message}`);
    if (!r.problems.length) out.push(...r.messages);
  }
  return out;
}

/** Parses a duration: `90`, `45s`, `30m`, `12h`, `7d` → milliseconds. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) return null;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? "s"]!;
  return Number(m[1]) * unit;
}
