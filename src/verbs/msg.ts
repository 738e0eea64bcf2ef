import { CliFailure, UsageError } from "../errors.ts";
import { ExitCode } from "../spec/codes.ts";
import { defineVerb, printJson, printLine, printTable } from "./_verb.ts";

const SUBS = ["send", "ls", "show", "wait", "prune"];

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
  options: {
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
  },
  positionals: [{ name: "subcommand" }, { name: "arg", optional: true, rest: true }],
  async run({ opts, args }) {
    const sub = args[0];
    if (!SUBS.includes(sub)) {
      throw new UsageError(
        `Unknown msg subcommand "${sub}"; one of ${SUBS.join(", ")}; see paneflow msg --help`,
      );
    }
    const { queueRoot, allMessages, parseDuration } = await import("../paneio/cli.ts");
    const { untilQueue } = await import("../paneio/queue_watch.ts");
    const store = await import("../paneio/store.ts");
    const root = await queueRoot(opts.queue);
    const rest = args.slice(1);
    const one = (what: string) => {
      if (rest.length !== 1) {
        throw new UsageError(`paneflow msg ${sub} takes one <${what}>; see paneflow msg --help`);
      }
      return rest[0];
    };
    const find = async (id: string) => {
      const m = (await allMessages(root, true)).find((x) => x.msg.id === id);
      if (!m) throw new CliFailure(`No message "${id}" under ${root}/queue`, ExitCode.NotFound);
      return m;
    };
    switch (sub) {
      case "send": {
        if (!opts.from || !opts.to) throw new UsageError("paneflow msg send needs --from <a> and --to <b>");
        let content = one("content");
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
        await store.ensureRoot(root);
        const file = await store.appendMessage(root, r.data);
        if (opts.json) printJson({ id: r.data.id, file });
        else printLine(r.data.id);
        return 0;
      }
      case "ls": {
        if (rest.length) throw new UsageError(`Unexpected argument "${rest[0]}" for paneflow msg ls`);
        if (opts.status && !store.MessageStatus.safeParse(opts.status).success) {
          throw new UsageError(
            `--status must be pending, in_progress, completed or failed, not "${opts.status}"`,
          );
        }
        const list = (await allMessages(root)).filter((m) =>
          (!opts.to || m.msg.to === opts.to) && (!opts.from || m.msg.from === opts.from) &&
          (!opts.status || m.msg.status === opts.status)
        ).sort((a, b) => a.msg.timestamp.localeCompare(b.msg.timestamp));
        if (opts.json) {
          printJson(list.map((m) => ({ ...m.msg, file: m.file, line: m.line })));
          return 0;
        }
        printTable(
          ["ID", "FROM", "TO", "TYPE", "STATUS", "TIMESTAMP", "CONTENT"],
          list.map((m) => [
            m.msg.id,
            m.msg.from,
            m.msg.to,
            m.msg.type,
            m.msg.status,
            m.msg.timestamp,
            (m.msg.content.split("\n")[0] ?? "").slice(0, 60),
          ]),
        );
        return 0;
      }
      case "show": {
        const m = await find(one("id"));
        if (opts.json) printJson({ ...m.msg, file: m.file, line: m.line });
        else printLine(`# ${m.file}:${m.line}\n${store.messageYaml(m.msg).trimEnd()}`);
        return 0;
      }
      case "wait": {
        const id = one("id");
        const deadline = opts.timeout === undefined ? Infinity : Date.now() + opts.timeout * 1000;
        let last = "";
        const m = await untilQueue(root, async () => {
          const found = await find(id);
          last = found.msg.status;
          return last === "completed" || last === "failed" ? found : null;
        }, { deadline });
        if (!m) throw new CliFailure(`Timed out waiting for ${id}: it is still ${last}`, ExitCode.Timeout);
        const meta = m.msg.metadata as { result?: unknown; reason?: unknown };
        if (opts.json) printJson({ ...m.msg, file: m.file, line: m.line });
        else if (m.msg.status === "completed") {
          if (meta.result !== undefined && meta.result !== "") printLine(String(meta.result));
        } else console.error(`paneflow: ${id} failed: ${String(meta.reason ?? "no reason recorded")}`);
        return m.msg.status === "completed" ? 0 : 1;
      }
      case "prune": {
        if (rest.length) throw new UsageError(`Unexpected argument "${rest[0]}" for paneflow msg prune`);
        const age = opts["older-than"] === undefined ? 0 : parseDuration(opts["older-than"]);
        if (age === null) throw new UsageError(`--older-than takes a duration such as 90s, 30m, 12h or 7d`);
        const cutoff = Date.now() - age;
        let n = 0;
        for (const f of await store.queueFiles(root)) {
          n += await store.pruneFile(f, (msg) => {
            const at = Date.parse(String(msg.metadata.finished_at ?? msg.timestamp));
            return !Number.isFinite(at) || at <= cutoff;
          });
        }
        if (opts.json) printJson({ pruned: n });
        else printLine(`pruned ${n} message${n === 1 ? "" : "s"}`);
        return 0;
      }
    }
    return 0;
  },
});
