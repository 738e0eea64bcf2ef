/**
 * The embedded host of `flow run`: a whole host in the flow's own process, on
 * a private socket in a temporary directory, for a place with no daemon (a CI
 * container). Besides `serve`, this is the one verb module that starts the
 * host (src/server/), and `flow` loads it only when it embeds one.
 *
 * @module
 */
import type { Config } from "../spec/config.ts";
import { startHost } from "../server/host.ts";

/** A running embedded host. */
export interface EmbeddedHost {
  /** Its socket, in {@link EmbeddedHost.dir}. */
  socketPath: string;
  /** The temporary directory that holds the socket; removed by `stop`. */
  dir: string;
  stop(): Promise<void>;
}

/**
 * Starts a host on a fresh private socket; panes of this process's children
 * (the CLI, the agents' hook) reach it through `PANEFLOW_SOCKET_PATH`, which
 * is set to it.
 */
export async function startEmbedded(config: Config): Promise<EmbeddedHost> {
  const dir = await Deno.makeTempDir({ prefix: "paneflow-flow-" });
  const socketPath = `${dir}/s.sock`;
  Deno.env.set("PANEFLOW_SOCKET_PATH", socketPath);
  const host = await startHost({ socketPath, config, log: () => {} });
  return {
    socketPath,
    dir,
    stop: async () => {
      await host.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
