/**
 * The pane worker's answer to each op of the protocol (./protocol.ts): one
 * handler per op, typed by {@link WorkerOps}, so a handler returns exactly
 * the result its caller in the pool is typed to receive.
 *
 * @module
 */
import type { OpName, OpRequest, OpResult } from "./worker_api.ts";
import { sessionCall, sessionResized } from "../session/engine.ts";
import { buffer, read } from "./views.ts";
import { serializeScreen } from "./screen_state.ts";
import { searchLines, snapshotModes } from "./screen.ts";
import {
  afterWrites,
  clearPane,
  disposePane,
  isWatched,
  jumpRows,
  mustGet,
  pacesHeld,
  panes,
  spawnPane,
} from "./panes.ts";
import { releaser } from "./release.ts";
import { PaneError, PaneErrorCode } from "./errors.ts";
import { prepareEngine } from "./engines.ts";

type Handlers = { [K in OpName]: (req: OpRequest<K>) => OpResult<K> | Promise<OpResult<K>> };

const handlers: Handlers = {
  spawn: async (req) => {
    await prepareEngine(req.engine ?? "xterm");
    return spawnPane(req);
  },
  write: async (req) => {
    const pane = mustGet(req.id);
    if (pane.exited) throw new PaneError(PaneErrorCode.Exited, `pane ${req.id}'s program has exited`);
    await pane.input.write(req.data);
    return null;
  },
  resize: (req) => {
    const pane = mustGet(req.id);
    pane.engine.resize(req.cols, req.rows);
    if (!pane.exited) pane.pty.resize(req.cols, req.rows);
    sessionResized(req.id);
    return null;
  },
  kill: (req) => {
    const pane = mustGet(req.id);
    if (!pane.exited) {
      try {
        pane.pty.kill(req.signal);
      } catch { /* already gone */ }
    }
    return null;
  },
  dispose: (req) => disposePane(req.id),
  read: (req) => {
    const pane = mustGet(req.id);
    return afterWrites(pane, () => read(pane, req.lines, req.offset, req.since, req.join));
  },
  search: (req) => {
    const pane = mustGet(req.id);
    return afterWrites(pane, () => ({
      hits: searchLines(buffer(pane), req.pattern, req.max),
      generation: pane.generation,
    }));
  },
  session: (req) => {
    // A wait is answered from the check that decides it (./worker.ts's `waitFor`), never here.
    if (req.call.kind === "wait") throw new Error("session.wait is not an op of handle()");
    return sessionCall(req.id, req.call);
  },
  clear: async (req) => {
    const pane = mustGet(req.id);
    return await afterWrites(pane, () => clearPane(pane));
  },
  stats: () => {
    const { heapUsed, heapTotal } = Deno.memoryUsage();
    return {
      heap_used: heapUsed,
      heap_total: heapTotal,
      panes: panes.size,
      trims: releaser.trims,
      trim_ms: Math.round(releaser.trimMs),
      watched: isWatched(),
      pacing: pacesHeld(),
      jump_rows: jumpRows(),
    };
  },
  modes: (req) => {
    const pane = mustGet(req.id);
    return afterWrites(pane, () => ({
      ...snapshotModes(pane.engine),
      generation: pane.generation,
      bytes_in: pane.bytesIn,
    }));
  },
  screen: (req) => {
    const pane = mustGet(req.id);
    return afterWrites(pane, () => serializeScreen(pane.engine, req.scrollback, pane.generation));
  },
};

/** Runs one request's op (a handler that throws gives a rejected promise). */
export async function handle<K extends OpName>(req: OpRequest<K>): Promise<OpResult<K>> {
  // The handler of `req.op` takes `req`: TypeScript cannot relate the two through the union.
  const handler = handlers[req.op] as (req: OpRequest<K>) => OpResult<K> | Promise<OpResult<K>>;
  return await handler(req);
}
