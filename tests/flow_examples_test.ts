/**
 * The example flows: every `examples/*.flow.toml` validates (agents mapped to
 * `sh` in the config, so no agent needs to be installed), a workspace example
 * sits beside them, and the review flow runs unchanged with stand-in
 * agents (a script that answers each line it is given).
 */
import assert from "node:assert/strict";
import { ROOT, runCli, waitUntil, withHost } from "./_harness.ts";

const EXAMPLES = `${ROOT}examples`;

Deno.test("examples: every flow validates when its agents exist; team.workspace.toml sits beside them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pf-ex-" });
  try {
    const config = `${dir}/config.jsonc`;
    await Deno.writeTextFile(
      config,
      JSON.stringify({ agents: { claude: { command: "sh" }, codex: { command: "sh" } } }),
    );
    const flows: string[] = [];
    for await (const e of Deno.readDir(EXAMPLES)) if (e.name.endsWith(".flow.toml")) flows.push(e.name);
    flows.sort();
    assert.deepEqual(flows, ["demo.flow.toml", "review.flow.toml"]);
    assert.ok((await Deno.stat(`${EXAMPLES}/team.workspace.toml`)).isFile);
    const env = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? dir,
      PANEFLOW_CONFIG: config,
      PANEFLOW_SOCKET_PATH: `${dir}/none.sock`,
    };
    const runs = await Promise.all(flows.map((f) => runCli(["flow", "validate", `${EXAMPLES}/${f}`], env)));
    for (const [i, r] of runs.entries()) {
      assert.equal(r.stderr, "", flows[i]);
      assert.match(r.stdout, /: ok \(\d+ steps\)\n$/, flows[i]);
      assert.equal(r.code, 0, flows[i]);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("examples: the review flow runs unchanged with stand-in agents", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pf-agent-" });
  const agent = `${dir}/agent.sh`;
  // Answers each line of a submitted prompt; the DONE: line is impl's ready marker.
  await Deno.writeTextFile(agent, `while IFS= read -r line; do echo "DONE: handled: $line"; done\n`);
  const config = JSON.stringify({
    agents: { claude: { command: `sh ${agent}` }, codex: { command: `sh ${agent}` } },
  });
  try {
    await withHost({ config }, async (host) => {
      // The review flow in the format Paneflow documents, with api/ and web/ beside it.
      const flow = `${ROOT}tests/fixtures/flow/valid/review.toml`;
      const r = await host.cli(["flow", "run", flow, "--json"]);
      assert.equal(r.code, 0, `exit ${r.code}\n${r.stdout}\n--- stderr ---\n${r.stderr}`);
      const report = JSON.parse(r.stdout);
      assert.deepEqual(
        report.steps.map((s: { step: string; status: string }) => `${s.step} ${s.status}`),
        ["impl READY", "review READY", "check[api] READY", "check[web] READY", "report READY"],
      );
      assert.match(report.captures.summary, /^DONE: handled: Do the task in TASK\.md/m);
      assert.deepEqual(Object.keys(report.captures.result), ["api", "web"]);
      assert.match(report.captures.result.api, /CHECKED:api$/);
      assert.match(report.captures.result.web, /CHECKED:web$/);
      // review's prompt carried impl's summary; report's send reached impl's pane and was submitted.
      const steps = Object.fromEntries(
        report.steps.map((s: { step: string; surface_id: number }) => [s.step, s.surface_id]),
      );
      const read = (id: number) =>
        host.call("surface.read", { surface_id: id, lines: 400, fenced: false })
          .then((x) => x.text.replaceAll("\n", ""));
      assert.match(await read(steps.review), /Its author says: Do the task in TASK\.md/);
      let seen = "";
      await waitUntil("report's text handled in impl's pane", async () => {
        seen = await read(steps.impl);
        // Without white space: where a row wraps, and the terminal's echo of the typed lines
        // interleaving with the agent's answers, depend on timing.
        const flat = seen.replace(/\s+/g, "");
        return flat.includes("DONE:handled:CHECKED:web") && flat.includes("DONE:handled:api:");
      }).catch((e) => {
        throw new Error(`${e.message}\n--- impl's pane ---\n${seen}\n--- report ---\n${r.stdout}`);
      });
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
