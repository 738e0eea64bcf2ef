/**
 * Starting a detached host and waiting until it answers, for `serve
 * --detach` and the verbs that autostart one (`new`, `up`, `flow run`).
 *
 * @module
 */
import { Client, clientAddress, isRemote } from "./client.ts";
import { CliFailure } from "../errors.ts";
import { dirname, selfCommand, socketPath } from "../paths.ts";
import { later, sleep } from "./timer.ts";

/** The log file of a detached host on `path`. */
export function logPath(path: string): string {
  return `${dirname(path)}/paneflow.log`;
}

/** How long a listener on the socket may take to say who it is. */
const IDENTIFY_MS = 2000;

/**
 * The pid of the host answering on `path`, or null when none does. A
 * listener that is not paneflow and never answers is given up on after
 * {@link IDENTIFY_MS} (closing the connection ends the pending call).
 */
async function answeringPid(path: string): Promise<number | null> {
  const c = await Client.tryConnect(path);
  if (!c) return null;
  const cancel = later(IDENTIFY_MS, () => c.close());
  try {
    return (await c.call("system.identify")).pid;
  } catch {
    return null;
  } finally {
    cancel();
    c.close();
  }
}

/**
 * Starts `paneflow serve` in the background and waits until it answers.
 * A host already answering on `path` is an error, unless `shared` (a verb
 * that autostarts a host takes one that another started meanwhile).
 */
export async function startDetached(
  path: string = socketPath(),
  { shared = false, args: extra = [] as string[] } = {},
): Promise<string> {
  if (await answeringPid(path) !== null) {
    if (shared) return path;
    throw new CliFailure(`A paneflow host is already running on ${path}`);
  }
  const log = logPath(path);
  await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const [cmd, ...args] = selfCommand(["serve", "--log", log, ...extra], { host: true });
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
    // Only our own host counts: another may answer while ours gives up on its socket.
    const pid = await answeringPid(path);
    if (pid === child.pid || (shared && pid !== null && exited)) return path;
    if (exited) break;
    await sleep(25);
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
  const address = clientAddress();
  // A remote host is started there by the relay (`relay --start`).
  if (isRemote(address)) return await Client.connect(address, { start: autostart });
  const path = socketPath();
  const existing = await Client.tryConnect(path);
  if (existing) return existing;
  if (!autostart) return await Client.connect(path);
  await startDetached(path, { shared: true });
  return await Client.connect(path);
}
