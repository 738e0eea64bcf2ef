import { CliFailure, UsageError } from "../errors.ts";
import { ExitCode } from "../spec/codes.ts";
import { defineVerb, type OptionSpec, type Parsed, printJson, printLine, printTable } from "./_verb.ts";

const options = {
  queue: { type: "string", value: "<dir>", description: "The queue root" },
  from: { type: "string", value: "<a>", description: "send: the sender; ls: filter by sender" },
  to: { type: "string", value: "<b>", description: "send: the recipient; ls: filter by recipient" },
  type: { type: "string", value: "<type>", description: "send: task (default), info, result or error" },
  status: { type: "string", value: "<s>", description: "ls: pending, in_progress, completed or failed" },
  timeout: { type: "number", value: "<s>", description: "wait: seconds (default: no limit)" },
  "older-than": {
    type: "string",
    value: "<d>",
    description: "prune: only messages finished this long ago",
  },
  meta: { type: "string", multiple: true, value: "<k=v>", description: "send: a metadata entry" },
  json: { type: "boolean", description: "Print JSON" },
} satisfies Record<string, OptionSpec>;

/** What a subcommand gets: its name, the queue root, its arguments, the options, and the queue modules (loaded only for `msg`). */
interface Msg {
  sub: string;
  root: string;
  rest: string[];
  opts: Parsed<typeof options>["opts"];
  cli: typeof import("../paneio/cli.ts");
  store: typeof import("../paneio/store.ts");
  watch: typeof import("../paneio/queue_watch.ts");
}

/** The subcommand's one argument. */
function one(m: Msg, what: string): string {
  if (m.rest.length !== 1) {
    throw new UsageError(`paneflow msg ${m.sub} takes one <${what}>; see paneflow msg --help`);
  }
  return m.rest[0];
}

/** The message with `id`, in any state. */
async function find(m: Msg, id: string) {
  const found = (await m.cli.allMessages(m.root, true)).find((x) => x.msg.id === id);
  if (!found) throw new CliFailure(`No message "${id}" under ${m.root}/queue`, ExitCode.NotFound);
  return found;
}

function noArguments(m: Msg): void {
  if (m.rest.length) throw new UsageError(`Unexpected argument "${m.rest[0]}" for paneflow msg ${m.sub}`);
}

async function send(m: Msg): Promise<number> {
  const { opts, store } = m;
  if (!opts.from || !opts.to) throw new UsageError("paneflow msg send needs --from <a> and --to <b>");
  let content = one(m, "content");
  if (content === "-") content = await new Response(Deno.stdin.readable).text();
  const metadata: Record<string, string> = {};
  for (const kv of opts.meta) {
    const eq = kv.indexOf("=");
    if (eq < 1) throw new UsageError(`--meta takes key=value, got "${kv}"`);
    metadata[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const candidate = {
    id: store.newId(),
    from: opts.from,
    to: opts.to,
    type: opts.type ?? "task",
    status: "pending",
    content,
    timestamp: new Date().toISOString(),
    metadata,
  };
  const r = store.Message.safeParse(candidate);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new UsageError(
      `Invalid message: ${i.path.length ? `"${i.path.join(".")}": ` : ""}${i.message}`,
    );
  }
  await store.ensureRoot(m.root);
  const file = await store.appendMessage(m.root, r.data);
  if (opts.json) printJson({ id: r.data.id, file });
  else printLine(r.data.id);
  return 0;
}

async function ls(m: Msg): Promise<number> {
  const { opts } = m;
  noArguments(m);
  if (opts.status && !m.store.MessageStatus.safeParse(opts.status).success) {
    throw new UsageError(
      `--status must be pending, in_progress, completed or failed, not "${opts.status}"`,
    );
  }
  const list = (await m.cli.allMessages(m.root)).filter((x) =>
    (!opts.to || x.msg.to === opts.to) && (!opts.from || x.msg.from === opts.from) &&
    (!opts.status || x.msg.status === opts.status)
  ).sort((a, b) => a.msg.timestamp.localeCompare(b.msg.timestamp));
  if (opts.json) {
    printJson(list.map((x) => ({ ...x.msg, file: x.file, line: x.line })));
    return 0;
  }
  printTable(
    ["ID", "FROM", "TO", "TYPE", "STATUS", "TIMESTAMP", "CONTENT"],
    list.map((x) => [
      x.msg.id,
      x.msg.from,
      x.msg.to,
      x.msg.type,
      x.msg.status,
      x.msg.timestamp,
      (x.msg.content.split("\n")[0] ?? "").slice(0, 60),
    ]),
  );
  return 0;
}

async function show(m: Msg): Promise<number> {
  const found = await find(m, one(m, "id"));
  if (m.opts.json) printJson({ ...found.msg, file: found.file, line: found.line });
  else printLine(`# ${found.file}:${found.line}\n${m.store.messageYaml(found.msg).trimEnd()}`);
  return 0;
}

async function wait(m: Msg): Promise<number> {
  const id = one(m, "id");
  const deadline = m.opts.timeout === undefined ? Infinity : Date.now() + m.opts.timeout * 1000;
  let last = "";
  const done = await m.watch.untilQueue(m.root, async () => {
    const found = await find(m, id);
    last = found.msg.status;
    return last === "completed" || last === "failed" ? found : null;
  }, { deadline });
  if (!done) throw new CliFailure(`Timed out waiting for ${id}: it is still ${last}`, ExitCode.Timeout);
  const meta = done.msg.metadata as { result?: unknown; reason?: unknown };
  if (m.opts.json) printJson({ ...done.msg, file: done.file, line: done.line });
  else if (done.msg.status === "completed") {
    if (meta.result !== undefined && meta.result !== "") printLine(String(meta.result));
  } else console.error(`paneflow: ${id} failed: ${String(meta.reason ?? "no reason recorded")}`);
  return done.msg.status === "completed" ? 0 : 1;
}

async function prune(m: Msg): Promise<number> {
  noArguments(m);
  const age = m.opts["older-than"] === undefined ? 0 : m.cli.parseDuration(m.opts["older-than"]);
  if (age === null) throw new UsageError(`--older-than takes a duration such as 90s, 30m, 12h or 7d`);
  const cutoff = Date.now() - age;
  let n = 0;
  for (const f of await m.store.queueFiles(m.root)) {
    n += await m.store.pruneFile(f, (msg) => {
      const at = Date.parse(String(msg.metadata.finished_at ?? msg.timestamp));
      return !Number.isFinite(at) || at <= cutoff;
    });
  }
  if (m.opts.json) printJson({ pruned: n });
  else printLine(`pruned ${n} message${n === 1 ? "" : "s"}`);
  return 0;
}

const SUBCOMMANDS: Record<string, (m: Msg) => Promise<number>> = { send, ls, show, wait, prune };
const SUBS = Object.keys(SUBCOMMANDS);

export default defineVerb({
  name: "msg",
  usage: [
    "paneflow msg send --from <a> --to <b> [--type task|info|result|error] <content|->",
    "       paneflow msg ls [--to <b>] [--from <a>] [--status <s>] [--json]",
    "       paneflow msg show <id> [--json]",
    "       paneflow msg wait <id> [--timeout <s>] [--json]",
    "       paneflow msg prune [--older-than <d>]",
  ].join("\n"),
  details: [
    "Messages live in <root>/queue/<from>_to_<to>.yaml (one message, or several as a YAML",
    "multi-document stream); the host started with --queue <root> (or config queue.root)",
    "delivers pending ones to the pane named like the recipient. Every verb takes --queue",
    "<root>; the default is $PANEFLOW_QUEUE, else the running host's root.",
    "wait exits 0 when the message completed (printing metadata.result), 1 when it failed",
    "(printing the reason), 4 on timeout. prune removes completed and failed messages",
    "finished longer ago than --older-than (default 0: all): 90s, 30m, 12h, 7d.",
    "See docs/paneio.md.",
  ].join("\n"),
  options,
  positionals: [{ name: "subcommand" }, { name: "arg", optional: true, rest: true }],
  async run({ opts, args }) {
    const sub = args[0];
    if (!SUBS.includes(sub)) {
      throw new UsageError(
        `Unknown msg subcommand "${sub}"; one of ${SUBS.join(", ")}; see paneflow msg --help`,
      );
    }
    const cli = await import("../paneio/cli.ts");
    const watch = await import("../paneio/queue_watch.ts");
    const store = await import("../paneio/store.ts");
    const root = await cli.queueRoot(opts.queue);
    return await SUBCOMMANDS[sub]({ sub, root, rest: args.slice(1), opts, cli, store, watch });
  },
});
