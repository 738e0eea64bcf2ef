/**
 * PaneIO on a host: the narrow host API, and the queue service when the
 * host has a queue root (`serve --queue DIR` or config `queue.root`).
 *
 * @module
 */
import type { EventBus } from "../core/bus.ts";
import { QueueService } from "./deliver.ts";
import { type HostParts, PaneHost } from "./pane_access.ts";

/** PaneIO's state on one host. */
export class PaneIO {
  readonly host: PaneHost;
  queue: QueueService | null = null;

  constructor(ctx: HostParts, bus: EventBus) {
    this.host = new PaneHost(ctx, bus);
  }

  /** Starts the queue service on `root` (made if missing). */
  async startQueue(root: string, settings: { graceMs: number; timeoutMs: number }): Promise<void> {
    const abs = root.startsWith("/") ? root : `${Deno.cwd()}/${root}`;
    const q = new QueueService(this.host, { root: abs, ...settings });
    await q.start();
    this.queue = q;
    this.host.log(`queue: delivering messages under ${abs}`);
  }

  dispose(): void {
    this.queue?.dispose();
  }
}
