import { Client } from "../client/client.ts";
import { listPanes, pickOne } from "../client/selectors.ts";
import { CliFailure, RpcError, UsageError } from "../errors.ts";
import { ErrorReason } from "../spec/codes.ts";
import { explainGate } from "./send.ts";
import { defineVerb } from "./_verb.ts";
import { later } from "../client/timer.ts";

/** Ctrl-] detaches, as in telnet. */
const DETACH = 0x1d;
/** At most this many redraws per second. */
const FRAME_MS = 33;

const enc = new TextEncoder();

/**
 * Turns stdin reads into text: a UTF-8 character split across two reads is
 * held until its last byte comes, never mangled into U+FFFD.
 */
export function keyDecoder(): (bytes: Uint8Array) => string {
  const dec = new TextDecoder();
  return (bytes) => dec.decode(bytes, { stream: true });
}

function out(s: string) {
  Deno.stdout.writeSync(enc.encode(s));
}

export default defineVerb({
  name: "attach",
  usage: "paneflow attach <target>",
  details: [
    "Redraws the pane's screen (as text, without colors) whenever it changes and forwards",
    "every key you type, Enter included, as raw bytes (so typing needs the write gate:",
    "PANEFLOW_IPC_SCRIPTING=1 or ai_unrestricted on the host). Ctrl-] detaches and leaves",
    "the pane running. The pane keeps its own size (the layout's); your terminal shows its top-left.",
  ].join("\n"),
  options: {},
  positionals: [{ name: "target" }],
  async run({ args }) {
    if (!Deno.stdin.isTerminal() || !Deno.stdout.isTerminal()) {
      throw new UsageError(
        "paneflow attach needs a terminal on stdin and stdout; use read and send in scripts",
      );
    }
    // One connection: replies are matched by id, events come in between.
    const client = await Client.connect();
    const events = client;
    const pane = pickOne(args[0], await listPanes(client));
    const id = pane.surface_id;
    const label = `pane ${id}${pane.name ? ` (${pane.name})` : ""}`;
    try {
      await events.subscribe({ surfaces: [id] });
    } catch {
      throw new CliFailure(`Cannot watch ${label}`);
    }

    let ended: string | null = null;
    let pending = false;
    let last = 0;
    const draw = async () => {
      pending = false;
      last = Date.now();
      const rows = Deno.consoleSize().rows || 24;
      const r = await client.call("surface.read", {
        surface_id: id,
        lines: Math.max(1, rows - 1),
        fenced: false,
      });
      const lines = r.text.split("\n");
      let frame = "\x1b[H\x1b[2J";
      frame += lines.join("\r\n");
      frame += `\x1b[${rows};1H\x1b[7m paneflow: ${label} · Ctrl-] to detach ${
        ended ? `· ${ended} ` : ""
      }\x1b[0m`;
      out(frame);
    };
    const schedule = () => {
      if (pending) return;
      pending = true;
      later(Math.max(0, FRAME_MS - (Date.now() - last)), () => draw().catch(() => {}));
    };

    Deno.stdin.setRaw(true);
    out("\x1b[?1049h\x1b[?25l");
    try {
      await draw();
      const watching = (async () => {
        while (true) {
          const msg = await events.next();
          if (msg === null) {
            ended = "the host went away";
            return;
          }
          const ev = msg.value;
          if (ev.type === "surface_exited") ended = `exited (code ${ev.exit_code})`;
          if (ev.type === "surface_closed") {
            ended = "closed";
            return;
          }
          schedule();
        }
      })();
      const buf = new Uint8Array(4096);
      const decode = keyDecoder();
      const typing = (async () => {
        while (true) {
          const n = await Deno.stdin.read(buf);
          if (n === null) return;
          const chunk = buf.subarray(0, n);
          const stop = chunk.indexOf(DETACH);
          const keys = stop >= 0 ? chunk.subarray(0, stop) : chunk;
          const text = keys.length ? decode(keys) : "";
          if (text && !ended) {
            await client.call("surface.send_text", { surface_id: id, text })
              .catch((e) => {
                if (e instanceof RpcError && e.data?.reason === ErrorReason.Exited) return;
                explainGate(e);
              });
          }
          if (stop >= 0) return;
        }
      })();
      await Promise.race([typing, watching.then(() => new Promise(() => {}))]);
    } finally {
      out("\x1b[?25h\x1b[?1049l");
      Deno.stdin.setRaw(false);
      client.close();
    }
    console.error(`paneflow: detached from ${label}${ended ? ` (${ended})` : ""}`);
    return 0;
  },
});
