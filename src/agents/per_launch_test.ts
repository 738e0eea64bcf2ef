import assert from "node:assert/strict";
import {
  geminiSystemDefaultsPath,
  launchHooks,
  NoLaunchHooks,
  secureDirProblem,
  type StatProbe,
} from "./per_launch.ts";
import { MARKER } from "./claude_settings.ts";
import { GEMINI_HOOK_EVENTS } from "./agent_hooks.ts";

/** Real files, but every path under `root` reported as owned by root and 0700/0600 (Gemini's rule). */
function ownedByRoot(root: string, overrides: Record<string, { uid: number; mode: number }> = {}): StatProbe {
  return {
    stat(path) {
      if (overrides[path]) return overrides[path];
      try {
        const st = Deno.statSync(path);
        return { uid: 0, mode: st.isDirectory ? 0o40700 : 0o100600 };
      } catch {
        return null;
      }
    },
    realPath: (p) => (p.startsWith(root) ? p : Deno.realPathSync(p)),
  };
}

Deno.test("secureDirProblem: Gemini's rule, root-owned and not group/other-writable up to /", () => {
  const tree: Record<string, { uid: number; mode: number }> = {
    "/": { uid: 0, mode: 0o40755 },
    "/run": { uid: 0, mode: 0o40755 },
    "/run/pf": { uid: 0, mode: 0o40700 },
    "/tmp": { uid: 0, mode: 0o41777 },
    "/tmp/pf": { uid: 0, mode: 0o40700 },
    "/home": { uid: 0, mode: 0o40755 },
    "/home/u": { uid: 1000, mode: 0o40700 },
  };
  const fs: StatProbe = { stat: (p) => tree[p] ?? null, realPath: (p) => p };
  assert.equal(secureDirProblem("/run/pf", fs), null);
  assert.equal(secureDirProblem("/run/pf/", fs), null);
  assert.equal(secureDirProblem("/tmp/pf", fs), "/tmp is writable by group or others");
  assert.equal(secureDirProblem("/home/u", fs), "/home/u is not owned by root");
  assert.equal(secureDirProblem("/run/none", fs), "/run/none does not exist");
  // A symlinked dir is judged on its target's ancestors too.
  const linked: StatProbe = { ...fs, realPath: (p) => (p === "/run/pf" ? "/tmp/pf" : p) };
  assert.equal(secureDirProblem("/run/pf", linked), "/tmp is writable by group or others");
});

Deno.test("geminiSystemDefaultsPath: the env var, else beside the system settings", () => {
  assert.equal(geminiSystemDefaultsPath({}), "/etc/gemini-cli/system-defaults.json");
  assert.equal(
    geminiSystemDefaultsPath({ GEMINI_CLI_SYSTEM_SETTINGS_PATH: "/opt/g/s.json" }),
    "/opt/g/system-defaults.json",
  );
  assert.equal(geminiSystemDefaultsPath({ GEMINI_CLI_SYSTEM_DEFAULTS_PATH: "/x/d.json" }), "/x/d.json");
});

Deno.test("launchHooks gemini: a system-defaults copy with our hooks, in the first dir Gemini accepts", async () => {
  const root = await Deno.makeTempDir();
  try {
    const home = `${root}/home`;
    await Deno.mkdir(`${home}/.gemini`, { recursive: true });
    // The system defaults the pane would read: kept, its hooks first.
    const sys = `${root}/etc/system-defaults.json`;
    await Deno.mkdir(`${root}/etc`);
    await Deno.writeTextFile(
      sys,
      `{ // the admin's
  "ui": { "theme": "x" },
  "hooks": { "AfterAgent": [{ "matcher": "*", "hooks": [{ "type": "command", "command": "admin" }] }] },
}`,
    );
    const insecure = `${root}/sock`;
    await Deno.mkdir(insecure);
    const fs = ownedByRoot(root, { [insecure]: { uid: 0, mode: 0o40777 } });
    const r = launchHooks("gemini", {
      dir: insecure,
      fallbackDirs: [`${root}/cache/launch`],
      self: ["/bin/paneflow"],
      env: { HOME: home, GEMINI_CLI_SYSTEM_DEFAULTS_PATH: sys },
      id: "abc",
      fs,
    });
    assert.ok(r);
    const file = `${root}/cache/launch/gemini-defaults-abc.json`;
    assert.deepEqual(r.env, { GEMINI_CLI_SYSTEM_DEFAULTS_PATH: file });
    assert.deepEqual(r.files, [file]);
    assert.equal(r.suffix, "");
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
    const out = JSON.parse(await Deno.readTextFile(file));
    assert.deepEqual(out.ui, { theme: "x" });
    assert.deepEqual(Object.keys(out.hooks).sort(), [...GEMINI_HOOK_EVENTS].sort());
    assert.equal(out.hooks.AfterAgent[0].hooks[0].command, "admin");
    const ours = out.hooks.AfterAgent[1];
    assert.equal(ours.matcher, "*");
    assert.equal(ours.hooks[0].name, "paneflow-AfterAgent");
    assert.equal(ours.hooks[0].command, `/bin/paneflow ai-hook --tool gemini AfterAgent ${MARKER}`);
    assert.equal(ours.hooks[0].timeout, 10_000);

    // The user already has paneflow's persistent hooks: none per launch (they would fire twice).
    const hooks = Object.fromEntries(GEMINI_HOOK_EVENTS.map((e) => [e, out.hooks[e].slice(-1)]));
    await Deno.writeTextFile(`${home}/.gemini/settings.json`, JSON.stringify({ hooks }));
    assert.equal(
      launchHooks("gemini", {
        dir: `${root}/cache/launch`,
        self: ["/bin/paneflow"],
        env: { HOME: home },
        id: "d",
        fs,
      }),
      null,
    );
    await Deno.remove(`${home}/.gemini/settings.json`);

    // No directory Gemini accepts (a host not running as root): say why.
    assert.throws(
      () =>
        launchHooks("gemini", {
          dir: insecure,
          self: ["/bin/paneflow"],
          env: { HOME: home },
          id: "e",
          fs: { ...fs, stat: (p) => ({ ...fs.stat(p)!, uid: 1000 }) },
        }),
      (e: Error) =>
        e instanceof NoLaunchHooks && /root-owned/.test(e.message) &&
        /hooks setup --agent gemini/.test(e.message),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("opencode per launch: a plugin file added by OPENCODE_CONFIG_CONTENT, skipped when installed", async () => {
  const root = await Deno.makeTempDir({ prefix: "pf-oclaunch-" });
  try {
    const env = { HOME: `${root}/home` };
    const opts = { dir: root, self: ["/usr/bin/paneflow"], env, id: "abc" };
    const hooks = launchHooks("opencode", opts)!;
    assert.equal(hooks.suffix, "");
    assert.deepEqual(hooks.files, [`${root}/opencode-plugin-abc.js`]);
    assert.deepEqual(JSON.parse(hooks.env!.OPENCODE_CONFIG_CONTENT), {
      plugin: [`file://${root}/opencode-plugin-abc.js`],
    });
    const text = Deno.readTextFileSync(hooks.files[0]);
    assert.match(text, /^\/\/ paneflow-managed/);
    assert.match(text, /"\/usr\/bin\/paneflow","ai-hook","--tool","opencode"/);
    // The pane already sets OPENCODE_CONFIG_CONTENT: ours would replace it.
    assert.throws(
      () => launchHooks("opencode", { ...opts, env: { ...env, OPENCODE_CONFIG_CONTENT: "{}" } }),
      (e: Error) => e instanceof NoLaunchHooks && /OPENCODE_CONFIG_CONTENT/.test(e.message),
    );
    // `hooks setup --agent opencode` installed the plugin: it would report twice.
    Deno.mkdirSync(`${root}/home/.config/opencode/plugins`, { recursive: true });
    Deno.writeTextFileSync(`${root}/home/.config/opencode/plugins/paneflow.js`, text);
    assert.equal(launchHooks("opencode", { ...opts, id: "def" }), null);
    // A user's own file of that name is not ours.
    Deno.writeTextFileSync(`${root}/home/.config/opencode/plugins/paneflow.js`, "export const X = 1;\n");
    assert.ok(launchHooks("opencode", { ...opts, id: "ghi" }));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("Qwen Code per launch: a system-defaults copy with our hooks, skipped when installed", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const home = `${dir}/home`;
    Deno.mkdirSync(`${home}/.qwen`, { recursive: true });
    Deno.writeTextFileSync(
      `${dir}/defaults.json`,
      JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command: "mine" }] }] } }),
    );
    const env = { HOME: home, QWEN_CODE_SYSTEM_DEFAULTS_PATH: `${dir}/defaults.json` };
    const got = launchHooks("qwen", { dir, self: ["paneflow"], env, id: "7" });
    assert.ok(got);
    assert.equal(got.suffix, "");
    const file = got.env!.QWEN_CODE_SYSTEM_DEFAULTS_PATH;
    const settings = JSON.parse(Deno.readTextFileSync(file));
    assert.equal(settings.hooks.Stop[0].hooks[0].command, "mine", "the system defaults' own hooks are kept");
    assert.match(JSON.stringify(settings.hooks.Stop), /paneflow ai-hook --tool qwen Stop/);
    assert.ok(settings.hooks.PermissionRequest);
    // Installed by `hooks setup --agent qwen`: no second set.
    Deno.writeTextFileSync(`${home}/.qwen/settings.json`, JSON.stringify({ hooks: settings.hooks }));
    assert.equal(launchHooks("qwen", { dir, self: ["paneflow"], env, id: "8" }), null);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
