/**
 * Queue methods: the agent message queue the host delivers (src/paneio/, docs/paneio.md).
 *
 * @module
 */
import { paneioHandlers } from "../../paneio/methods.ts";
import type { FamilyHandlers } from "./_types.ts";

/** The `queue.*` handlers. */
export const queue: FamilyHandlers<"queue"> = {
  "queue.info": paneioHandlers["queue.info"],
};
