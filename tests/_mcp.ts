/**
 * The MCP SDK's own client connected to a `paneflow mcp` bridge over stdio.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ROOT } from "./_harness.ts";

const MAIN = `${ROOT}main.ts`;
const CONFIG = `${ROOT}deno.json`;

/** A connected SDK client and what the bridge wrote on stderr. */
export interface Bridge {
  client: Client;
  stderr: () => string;
  /** Errors the client saw on the transport (e.g. a non-protocol line on stdout). */
  transportErrors: Error[];
  close(): Promise<void>;
}

/** Spawns a bridge with `command args` (default: `deno run main.ts mcp`) and connects the SDK client. */
export async function connectBridge(
  socket: string,
  { command = Deno.execPath(), args = ["run", "-A", "--quiet", `--config=${CONFIG}`, MAIN, "mcp"], env = {} }:
    {
      command?: string;
      args?: string[];
      env?: Record<string, string>;
    } = {},
): Promise<Bridge> {
  const transport = new StdioClientTransport({
    command,
    args,
    env: { PANEFLOW_SOCKET_PATH: socket, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => (stderr += new TextDecoder().decode(chunk)));
  const transportErrors: Error[] = [];
  const client = new Client({ name: "paneflow-test", version: "1.0.0" });
  client.onerror = (e: Error) => transportErrors.push(e);
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    transportErrors,
    close: () => client.close(),
  };
}
