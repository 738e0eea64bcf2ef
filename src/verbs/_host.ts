/**
 * Starting a detached host and waiting until it answers, for `serve
 * --detach` and the verbs that autostart one (`new`, `up`, `flow run`).
 *
 * @module
 */
import { Client } from "../client.ts";
import { CliFailure } from "../errors.ts";
import { dirname, selfCommand, socketPath } from "../paths.ts";

/** The log file of a detached host on `path`. */
export function logPath(path: string): string {
  return `${dirname(path)}/paneflow.log`;
}

async function answers(path: string): Promise<boolean> {
  const c = await Client.tryConnect(path);
  if (!c) return false;
  try {
    await c.call("system.ping");
    return true;
  } catch {
    return false;
  } finally {
    c.close();
  }
}

/** Starts `paneflow serve` in the background and waits until it answers. */
export async function startDetached(path: string = socketPath()): Promise<string> {
  const log = logPath(path);
  await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const [cmd, ...args] = selfCommand(["serve", "--log", log], { host: true });
  const child = new Deno.Command(cmd, {
    args,
    env: { PANEFLOW_SOCKET_PATH: path },
    stdin: "null",
    stdout: "null",
    stderr: "null",
    detached: true,
  }).spawn();
  let exited = false;
  child.status.then(() => (exited = true));
  child.unref();
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (await answers(path)) return path;
    if (exited) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  let tail = "";
  try {
    tail = (await Deno.readTextFile(log)).trim().split("\n").slice(-1)[0] ?? "";
  } catch { /* no log */ }
  throw new CliFailure(
    `Could not start a host on ${path}${tail ? `: ${tail.replace(/^(\S+ )?paneflow: /, "")}` : ""}`,
  );
}

/** Connects to the host, starting a detached one first when none answers. */
export async function connectOrStart(autostart: boolean): Promise<Client> {
  const path = socketPath();
  const existing = await Client.tryConnect(path);
  if (existing) return existing;
  if (!autostart) return await Client.connect(path);
  await startDetached(path);
  return await Client.connect(path);
}
