/**
 * The host's /proc worker: answers {@link ProcRequest}s with
 * `foregroundMembers` (./proc.ts) or the process table
 * (`readProcessTable`, ../../isolation/reap.ts), so the hundreds of small
 * /proc reads of a process-detection or reaping scan never run on the
 * host's main thread.
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { foregroundMembers } from "./proc.ts";
import { readProcessTable } from "../isolation/reap.ts";
import type { ProcReply, ProcRequest } from "./proc_scan.ts";

self.onmessage = (e: MessageEvent<ProcRequest>) => {
  const req = e.data;
  const rid = req.rid;
  let reply: ProcReply;
  try {
    reply = req.kind === "table"
      ? { rid, table: readProcessTable() }
      : { rid, members: [...foregroundMembers(req.pids, req.quick)] };
  } catch (err) {
    reply = { rid, error: (err as Error).message };
  }
  self.postMessage(reply);
};
