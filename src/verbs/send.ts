import { withClient } from "../client/client.ts";
import { resolveMany, resolveOne } from "../client/selectors.ts";
import { CliFailure, RpcError, UsageError } from "../errors.ts";
import { ErrorReason } from "../spec/codes.ts";
import { defineVerb, printJson } from "./_verb.ts";

/** Adds how to open the write gate to a gate refusal. */
export function explainGate(err: unknown): never {
  if (err instanceof RpcError && err.data?.reason === ErrorReason.Gated) {
    throw new CliFailure(`Refused: ${err.message}`);
  }
  throw err;
}

/** Stdin as text; bytes that are not UTF-8 are refused rather than replaced. */
async function readStdin(): Promise<string> {
  const bytes = await new Response(Deno.stdin.readable).bytes();
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(
      "Standard input is not valid UTF-8; send carries text, so it cannot type those bytes",
    );
  }
}

export default defineVerb({
  name: "send",
  usage: "paneflow send <target> <text|-> [--submit] [--paste] [--broadcast] [--json]",
  details: [
    "Nothing is appended unless --submit. With --submit the text is pasted (bracketed",
    "when the program enabled it) and a carriage return follows after submit_paste_delay_ms;",
    "line endings at the end of the text are dropped, as that Enter is the one they meant.",
    'A payload is at most 64 KiB. Text "-" reads stdin; text starting with "-" goes after "--"',
    "(paneflow send p -- -x). Needs PANEFLOW_IPC_SCRIPTING=1 in",
    "the host's environment or ai_unrestricted in its config.",
  ].join("\n"),
  options: {
    submit: { type: "boolean", description: "Paste the text, then press Enter" },
    paste: { type: "boolean", description: "Paste (bracketed when enabled) instead of typing" },
    broadcast: { type: "boolean", description: "Send to every pane the selector matches" },
    json: { type: "boolean", description: "Print the result object(s)" },
  },
  positionals: [{ name: "target" }, { name: "text" }],
  async run({ opts, args }) {
    let text = args[1] === "-" ? await readStdin() : args[1];
    // `echo prompt | paneflow send p - --submit` and `send p $'make\r' --submit`
    // mean one Enter: --submit's.
    if (opts.submit) text = text.replace(/[\r\n]+$/, "");
    if (opts.submit && text.includes("\r")) {
      throw new UsageError("Text must not contain a carriage return; --submit adds the one Enter");
    }
    return withClient(async (client) => {
      let ids: number[];
      if (opts.broadcast) {
        // A broadcast writes to every live match; exited panes can only be read.
        const found = await resolveMany(client, args[0]);
        ids = found.filter((p) => p.exited !== true).map((p) => p.surface_id);
        if (!ids.length) {
          throw new CliFailure(
            `Every pane matching "${args[0]}" has exited (${
              found.map((p) => p.surface_id).join(", ")
            }); nothing was sent`,
          );
        }
      } else {
        ids = [await resolveOne(client, args[0])];
      }
      const results = [];
      const failed: string[] = [];
      for (const surface_id of ids) {
        const call = client.call("surface.send_text", {
          surface_id,
          text,
          submit: opts.submit,
          paste: opts.paste,
        })
          .catch(explainGate);
        if (!opts.broadcast) {
          results.push(await call);
          continue;
        }
        // One pane failing (it exited meanwhile) does not stop the others.
        try {
          results.push(await call);
        } catch (e) {
          if (!(e instanceof RpcError)) throw e;
          failed.push(`pane ${surface_id}: ${e.message}`);
        }
      }
      if (opts.json) printJson(opts.broadcast ? { results } : results[0]);
      if (failed.length) {
        console.error(`paneflow: sent to ${results.length} of ${ids.length} panes; ${failed.join("; ")}`);
        return 1;
      }
      let code = 0;
      for (const r of results as { surface_id: number; status?: string; evidence?: string }[]) {
        // A pane with a known agent reports how the submit went (docs/agents.md, Submitting to an agent).
        if (r.status === undefined) continue;
        if (!opts.json) console.log(`${r.surface_id}: ${r.status} (${r.evidence})`);
        if (r.status === "stalled") {
          console.error(
            `paneflow: pane ${r.surface_id}: the prompt was pasted but the agent did not take it`,
          );
          code = 1;
        }
      }
      return code;
    });
  },
});
