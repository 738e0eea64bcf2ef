/**
 * The spawner worker (./spawner.ts): starts the pane workers' programs at
 * the host's own CPU priority. The pool hands it one `MessagePort` per pane
 * worker.
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { serveSpawns } from "./spawner.ts";

self.onmessage = (e: MessageEvent<{ port: MessagePort }>) => serveSpawns(e.data.port);
