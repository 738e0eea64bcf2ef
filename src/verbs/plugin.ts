import { UsageError } from "../errors.ts";
import { withClient } from "../client/client.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "plugin",
  usage: "paneflow plugin ls | paneflow plugin describe <name> | paneflow plugin validate <manifest>",
  details: [
    "ls: the plugins the host can start adapters with (adapter.list).",
    "describe: a plugin's intents, wait matchers and states (plugin.describe).",
    "validate: checks a manifest file (TOML or JSON) here, without a host: the manifest",
    "rules, the entrypoint inside the manifest's directory, and a sandboxed run of the",
    "entrypoint; prints the manifest and the functions it exports. See docs/plugins.md.",
  ].join("\n"),
  options: {},
  positionals: [{ name: "command" }, { name: "arg", optional: true }],
  async run({ args }) {
    const [cmd, arg] = args;
    if (cmd === "ls") {
      if (arg !== undefined) throw new UsageError(`Unexpected argument "${arg}" for paneflow plugin ls`);
      return await withClient(async (c) => {
        printJson(await c.call("adapter.list", {}));
        return 0;
      });
    }
    if (cmd === "describe") {
      if (!arg) throw new UsageError("Missing <name> for paneflow plugin describe");
      return await withClient(async (c) => {
        printJson(await c.call("plugin.describe", { plugin: arg }));
        return 0;
      });
    }
    if (cmd === "validate") {
      if (!arg) throw new UsageError("Missing <manifest> for paneflow plugin validate");
      const { CliFailure } = await import("../errors.ts");
      const { loadManifest } = await import("../plugins/manifest.ts");
      const { createRuntime } = await import("../plugins/runtime.ts");
      let loaded;
      try {
        loaded = await loadManifest(arg);
      } catch (e) {
        throw new CliFailure((e as Error).message, undefined, { cause: e });
      }
      let exports: string[];
      try {
        const rt = await createRuntime(loaded.manifest, loaded.source);
        exports = rt.exports;
        rt.close();
      } catch (e) {
        throw new CliFailure(`${arg}: ${(e as Error).message}`, undefined, { cause: e });
      }
      if (loaded.manifest.kind === "adapter" && !exports.includes("classify")) {
        throw new CliFailure(`${arg}: an adapter plugin must export \`classify\``);
      }
      printJson({ valid: true, manifest: loaded.manifest, entrypoint: loaded.entrypoint, exports });
      return 0;
    }
    throw new UsageError(`Unknown plugin command "${cmd}"; expected ls, describe or validate`);
  },
});
