import { Client } from "../client/client.ts";
import { listPanes, type PaneInfo, pickOne } from "../client/selectors.ts";
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

/** What the redraw and the key loops share: the pane, and why it ended once it has. */
interface Session {
  client: Client;
  id: PaneInfo["surface_id"];
  label: string;
  ended: string | null;
}

/** `draw` paints the pane now; `schedule` asks for a frame, at most one per `FRAME_MS`. */
function redrawer(s: Session): { draw: () => Promise<void>; schedule: () => void } {
  let pending = false;
  let last = 0;
  const draw = async () => {
    pending = false;
    last = Date.now();
    const rows = Deno.consoleSize().rows || 24;
    const r = await s.client.call("surface.read", {
      surface_id: s.id,
      lines: Math.max(1, rows - 1),
      fenced: false,
    });
    const lines = r.text.split("\n");
    let frame = "\x1b[H\x1b[2J";
    frame += lines.join("\r\n");
    frame += `\x1b[${rows};1H\x1b[7m paneflow: ${s.label} · Ctrl-] to detach ${
      s.ended ? `· ${s.ended} ` : ""
    }\x1b[0m`;
    out(frame);
  };
  const schedule = () => {
    if (pending) return;
    pending = true;
    later(Math.max(0, FRAME_MS - (Date.now() - last)), () => draw().catch(() => {}));
  };
  return { draw, schedule };
}

/** Asks for a redraw on every event until the pane closes or the host goes away. */
async function watchEvents(s: Session, schedule: () => void): Promise<void> {
  while (true) {
    const msg = await s.client.next();
    if (msg === null) {
      s.ended = "the host went away";
      return;
    }
    const ev = msg.value;
    if (ev.type === "surface_exited") s.ended = `exited (code ${ev.exit_code})`;
    if (ev.type === "surface_closed") {
      s.ended = "closed";
      return;
    }
    schedule();
  }
}

/** Forwards what is typed to the pane until Ctrl-] or the end of stdin. */
async function forwardKeys(s: Session): Promise<void> {
  const buf = new Uint8Array(4096);
  const decode = keyDecoder();
  while (true) {
    const n = await Deno.stdin.read(buf);
    if (n === null) return;
    const chunk = buf.subarray(0, n);
    const stop = chunk.indexOf(DETACH);
    const keys = stop >= 0 ? chunk.subarray(0, stop) : chunk;
    const text = keys.length ? decode(keys) : "";
    if (text && !s.ended) {
      await s.client.call("surface.send_text", { surface_id: s.id, text })
        .catch((e) => {
          if (e instanceof RpcError && e.data?.reason === ErrorReason.Exited) return;
          explainGate(e);
        });
    }
    if (stop >= 0) return;
  }
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
    const pane = pickOne(args[0], await listPanes(client));
    const id = pane.surface_id;
    const label = `pane ${id}${pane.name ? ` (${pane.name})` : ""}`;
    try {
      await client.subscribe({ surfaces: [id] });
    } catch {
      throw new CliFailure(`Cannot watch ${label}`);
    }

    const s: Session = { client, id, label, ended: null };
    const { draw, schedule } = redrawer(s);
    Deno.stdin.setRaw(true);
    out("\x1b[?1049h\x1b[?25l");
    try {
      await draw();
      const watching = watchEvents(s, schedule);
      await Promise.race([forwardKeys(s), watching.then(() => new Promise(() => {}))]);
    } finally {
      out("\x1b[?25h\x1b[?1049l");
      Deno.stdin.setRaw(false);
      client.close();
    }
    console.error(`paneflow: detached from ${label}${s.ended ? ` (${s.ended})` : ""}`);
    return 0;
  },
});
