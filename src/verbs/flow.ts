import { Client } from "../client/client.ts";
import { CliFailure, UsageError } from "../errors.ts";
import { socketPath } from "../paths.ts";
import { ExitCode } from "../spec/codes.ts";
import type { LocatedIssue } from "../spec/workspace.ts";
import { defineVerb, printJson } from "./_verb.ts";

/** Lines of each pane printed when an embedded host is torn down. */
const FINAL_LINES = 15;

export default defineVerb({
  name: "flow",
  usage: "paneflow flow <run|validate> <file> [--dry-run] [--json] [--keep-host] [--no-embedded]",
  details: [
    "run: steps start as soon as their needs are READY. Live transitions go to stderr, the",
    "report to stdout. With no host answering, an embedded host runs in this process on a",
    "private socket and is torn down at the end (--keep-host starts a detached one instead).",
    'A step with host = "<name>" (a host of the config) runs on that machine\'s host over ssh;',
    "--embedded and the rest apply to this machine's part of the flow only.",
    "Exit: 0 all READY, 1 a step failed, 2 invalid flow, 4 a ready timeout, 130 Ctrl-C.",
    "validate: checks the file and prints every problem (file:line:column: key: message).",
  ].join("\n"),
  options: {
    "dry-run": {
      type: "boolean",
      description: "Validate, check the write gate and print the plan; run nothing",
    },
    json: { type: "boolean", description: "Print the report (or plan) as JSON; no progress on stderr" },
    "keep-host": { type: "boolean", description: "With no host, start a detached one and leave it running" },
    "no-embedded": { type: "boolean", description: "With no host, fail instead of embedding one" },
    embedded: { type: "boolean", description: "Always run an embedded host, even when one answers" },
  },
  positionals: [{ name: "run|validate" }, { name: "file" }],
  async run({ opts, args }) {
    const [action, file] = args;
    if (action !== "run" && action !== "validate") {
      throw new UsageError(`Unknown flow action "${action}"; use run or validate`);
    }
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (e) {
      const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
      throw new UsageError(`Cannot read flow file "${file}": ${why}`, { cause: e });
    }
    const { parseFlowToml, FlowSpecError } = await import("../flow/check.ts");
    const { formatIssue } = await import("../up/check.ts");
    const { loadConfig } = await import("../spec/config.ts");
    const { launchers } = await import("../agents/launchers.ts");
    const config = await loadConfig().catch((e) => {
      throw new CliFailure((e as Error).message, undefined, { cause: e });
    });
    const table = launchers(config);
    const fail = (issues: LocatedIssue[]) => {
      for (const i of issues) console.error(`paneflow: ${formatIssue(i)}`);
      console.error(
        `paneflow: ${issues.length} problem${issues.length === 1 ? "" : "s"} in ${file}; nothing ran`,
      );
      if (opts.json) printJson({ ok: false, errors: issues });
      return ExitCode.Usage;
    };
    let plan;
    let locate;
    try {
      // Agents on PATH and worktree branches are checked as `up --dry-run` checks them.
      const { planPanes } = await import("../up/plan.ts");
      const { paneBaseEnv } = await import("../core/pane/env.ts");
      const baseEnv = paneBaseEnv(config);
      ({ plan, locate } = await parseFlowToml(text, {
        path: file,
        agents: Object.keys(table),
        hosts: Object.keys(config.hosts),
        checkPane: async (ws) => (await planPanes(ws, { launchers: table, baseEnv })).issues,
      }));
    } catch (e) {
      if (e instanceof FlowSpecError) return fail(e.issues);
      throw e;
    }
    // Every other machine the flow names answers (and its write gate is open) before anything
    // starts; `run` keeps those connections for the run.
    const { connectHosts, LOCAL, writeHosts } = await import("../flow/connections.ts");
    const remote = await connectHosts(plan, {
      open: action === "run" && !opts["dry-run"],
      gate: action === "run",
      file,
      locate,
    });
    if ("issues" in remote) return fail(remote.issues);
    const hosts = remote.hosts;
    if (action === "validate") {
      if (opts.json) {
        printJson({
          ok: true,
          flow: plan.name,
          steps: plan.steps.map((s) => s.key),
          hosts: plan.hosts,
        });
      } else console.log(`${file}: ok (${plan.steps.length} step${plan.steps.length === 1 ? "" : "s"})`);
      return 0;
    }

    const path = socketPath();
    // A flow whose every step runs on other machines needs no host here.
    const local = plan.steps.some((s) => s.host === null);
    const writes = writeHosts(plan).includes(LOCAL);
    if (opts.embedded && (opts["keep-host"] || opts["no-embedded"])) {
      hosts.close();
      throw new UsageError("Option --embedded excludes --keep-host and --no-embedded");
    }
    const existing = opts.embedded || !local ? null : await Client.tryConnect(path);
    // The write gate is checked before anything is created, also under --dry-run.
    if (writes) {
      let scripting: boolean;
      if (existing) {
        scripting = (await existing.call("system.capabilities")).scripting;
      } else {
        scripting = Deno.env.get("PANEFLOW_IPC_SCRIPTING") === "1" || config.ai_unrestricted;
      }
      if (!scripting) {
        existing?.close();
        hosts.close();
        throw new CliFailure(
          `The flow writes into panes (send or submit) but the host's write gate is closed: start the host with PANEFLOW_IPC_SCRIPTING=1 or set "ai_unrestricted": true in the config`,
        );
      }
    }
    if (opts["dry-run"]) {
      existing?.close();
      const { renderPlan } = await import("../flow/report.ts");
      if (opts.json) {
        printJson({
          dry_run: true,
          flow: plan.name,
          layout: plan.layout,
          on_failure: plan.onFailure,
          // `host` only on steps that run on another machine (the plan is otherwise as before).
          steps: plan.steps.map(({ host, ...s }) => host === null ? s : { ...s, host }),
        });
      } else console.log(renderPlan(plan, table));
      return 0;
    }

    let runPath: string | null = local ? path : null;
    let embedded: import("./_flow_embedded.ts").EmbeddedHost | null = null;
    let tempDir: string | null = null;
    if (!local) { /* nothing runs on this machine */ }
    else if (existing) existing.close();
    else if (opts["keep-host"]) {
      const { startDetached } = await import("../client/autostart.ts");
      await startDetached(path, { shared: true });
      if (!opts.json) {
        console.error(`paneflow: no host answered; started one on ${path} that keeps running after the flow`);
      }
    } else if (opts["no-embedded"]) {
      hosts.close();
      throw new CliFailure(
        `Instance unreachable: no paneflow host answers on ${path}; start one with: paneflow serve --detach`,
      );
    } else {
      const { startEmbedded } = await import("./_flow_embedded.ts");
      embedded = await startEmbedded(config);
      tempDir = embedded.dir;
      runPath = embedded.socketPath;
      if (!opts.json) {
        const why = opts.embedded ? "--embedded" : "no host answered";
        console.error(`paneflow: ${why}; running an embedded host on ${runPath}`);
      }
    }

    const { runFlow, exitCodeOf } = await import("../flow/runner.ts");
    const { LineProgress, LiveProgress, renderReport } = await import("../flow/report.ts");
    const abort = new AbortController();
    const onSigint = () => {
      if (!abort.signal.aborted) return abort.abort();
      // A second Ctrl-C while the first one winds down: leave at once. The
      // embedded host's panes get SIGHUP from the kernel as its PTYs close.
      console.error("paneflow: interrupted again; exiting without the report");
      if (tempDir) Deno.removeSync(tempDir, { recursive: true });
      Deno.exit(130);
    };
    Deno.addSignalListener("SIGINT", onSigint);
    const progress = opts.json
      ? new LineProgress(true)
      : Deno.stderr.isTerminal()
      ? new LiveProgress(plan)
      : new LineProgress();
    try {
      if (runPath !== null) {
        hosts.setLocal(runPath);
        const failures = await hosts.open([LOCAL]);
        if (failures.size) throw new CliFailure(failures.get(LOCAL)!);
      }
      const report = await runFlow(plan, { hosts, progress, signal: abort.signal });
      let finalScreens: Record<string, string> | undefined;
      if (embedded && runPath) {
        finalScreens = await readFinalScreens(runPath, report.steps.filter((s) => s.host === LOCAL));
      }
      if (opts.json) {
        printJson({
          ...report,
          exit_code: exitCodeOf(report),
          host: embedded ? "embedded" : runPath,
          final_screens: finalScreens,
        });
      } else {
        console.log(renderReport(report));
        for (const [step, screen] of Object.entries(finalScreens ?? {})) {
          console.log(`\n--- ${step}: last lines of its pane ---\n${screen}`);
        }
        if (report.cancelled) {
          console.error(
            embedded
              ? "paneflow: interrupted; the embedded host and its panes stop with this process (--keep-host keeps them)"
              : "paneflow: interrupted; panes the flow created were left as they are",
          );
        }
      }
      return exitCodeOf(report);
    } finally {
      hosts.close();
      Deno.removeSignalListener("SIGINT", onSigint);
      if (embedded) await embedded.stop();
      if (tempDir) await Deno.remove(tempDir, { recursive: true }).catch(() => {});
    }
  },
});

async function readFinalScreens(
  path: string,
  steps: { step: string; surface_id: number | null }[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const client = await Client.connect(path);
  try {
    const seen = new Set<number>();
    for (const s of steps) {
      if (s.surface_id === null || seen.has(s.surface_id)) continue;
      seen.add(s.surface_id);
      try {
        const r = await client.call("surface.read", {
          surface_id: s.surface_id,
          lines: FINAL_LINES,
          fenced: false,
        });
        out[s.step] = r.text;
      } catch { /* closed */ }
    }
  } finally {
    client.close();
  }
  return out;
}
