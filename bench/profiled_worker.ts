/**
 * The pane worker (src/core/pane/worker.ts) under V8's sampling profiler,
 * for bench/profile.ts: starts the profiler, loads the worker, and answers
 * the message `"profile-stop"` with `{profile}` (a .cpuprofile object);
 * every other message goes to the worker as usual.
 *
 * @module
 */
import { Session } from "node:inspector";

const scope = self as unknown as {
  postMessage(msg: unknown): void;
  onmessage: ((e: MessageEvent) => void) | null;
};
const session = new Session();
session.connect();
const post = <T>(method: string, params: Record<string, unknown> = {}) =>
  new Promise<T>((resolve, reject) =>
    session.post(method, params, (err: Error | null, res?: object) => (err ? reject(err) : resolve(res as T)))
  );
/** This thread's time on a core and waiting for one (ns, Linux's schedstat). */
const schedstat = () =>
  Deno.readTextFileSync("/proc/thread-self/schedstat").split(" ").slice(0, 2).map(Number);
let sched0 = [0, 0];
await post("Profiler.enable");
await post("Profiler.setSamplingInterval", { interval: 200 });
await import("../src/core/pane/worker.ts");
const inner = scope.onmessage!;
scope.onmessage = async (e: MessageEvent) => {
  if (e.data === "profile-start") {
    sched0 = schedstat();
    await post("Profiler.start");
    return scope.postMessage({ started: true });
  }
  if (e.data !== "profile-stop") return inner(e);
  const { profile } = await post<{ profile: unknown }>("Profiler.stop");
  const [ran, waited] = schedstat().map((v, i) => (v - sched0[i]) / 1e6);
  scope.postMessage({ profile, ran, waited });
};
scope.postMessage({ loaded: true });
