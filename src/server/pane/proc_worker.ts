/**
 * The host's /proc worker: answers {@link ProcRequest}s with
 * `foregroundMembers` (./proc.ts), so the hundreds of small /proc reads of a
 * process-detection scan never run on the host's main thread.
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { foregroundMembers } from "./proc.ts";
import type { ProcReply, ProcRequest } from "./proc_scan.ts";

self.onmessage = (e: MessageEvent<ProcRequest>) => {
  const { rid, pids, quick } = e.data;
  let reply: ProcReply;
  try {
    reply = { rid, members: [...foregroundMembers(pids, quick)] };
  } catch (err) {
    reply = { rid, error: (err as Error).message };
  }
  self.postMessage(reply);
};
