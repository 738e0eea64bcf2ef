/**
 * The floor for a one-shot read under `deno run`: one file, no argument
 * parsing, no dispatch, no error handling. It connects, sends one
 * `surface.read`, prints the text and exits, as `paneflow read <id> --raw`
 * does, so bench/run.ts can show what is left for the CLI itself. Plain
 * JavaScript, like the bundled CLI: a .ts file also pays for its transpiled
 * copy being checked.
 *
 *   deno run -A bench/oneshot_floor.js <surface_id>
 *
 * @module
 */
const conn = await Deno.connect({ transport: "unix", path: Deno.env.get("PANEFLOW_SOCKET_PATH") });
const request = {
  jsonrpc: "2.0",
  id: 1,
  method: "surface.read",
  params: { surface_id: Number(Deno.args[0]), fenced: false },
};
await conn.write(new TextEncoder().encode(JSON.stringify(request) + "\n"));
const chunk = new Uint8Array(1 << 20);
const decoder = new TextDecoder();
let text = "";
while (!text.includes("\n")) {
  const n = await conn.read(chunk);
  if (n === null) break;
  text += decoder.decode(chunk.subarray(0, n), { stream: true });
}
console.log(JSON.parse(text).result.text);
Deno.exit(0);
