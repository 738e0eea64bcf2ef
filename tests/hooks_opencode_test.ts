/**
 * `paneflow hooks setup|status|uninstall --agent opencode`: paneflow's plugin
 * file in opencode's config dir (OPENCODE_CONFIG_DIR, XDG_CONFIG_HOME or
 * ~/.config/opencode), tagged, written atomically with a backup, a user's
 * file of the same name refused, the user's opencode.json never touched.
 */
import assert from "node:assert/strict";
import { runCli } from "./_harness.ts";

Deno.test("hooks setup | status | uninstall | --dry-run for opencode's plugin", async () => {
  const root = await Deno.makeTempDir({ prefix: "pf-hooks-oc-" });
  try {
    const home = `${root}/home`;
    const xdg = `${root}/xdg`;
    await Deno.mkdir(`${home}/.config/opencode`, { recursive: true });
    await Deno.mkdir(`${xdg}/opencode`, { recursive: true });
    const userConfig = `{\n  // the user's own\n  "plugin": ["opencode-wakatime"]\n}\n`;
    await Deno.writeTextFile(`${xdg}/opencode/opencode.json`, userConfig);
    const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: xdg };
    const cli = (args: string[], e: Record<string, string> = env) => runCli(["hooks", ...args], e);
    const file = `${xdg}/opencode/plugins/paneflow.js`;
    const exists = (p: string) => Deno.stat(p).then(() => true, () => false);

    let r = await cli(["status", "--agent", "opencode", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      { file: JSON.parse(r.stdout).file, installed: JSON.parse(r.stdout).installed },
      { file, installed: false },
    );

    r = await cli(["setup", "--agent", "opencode", "--dry-run"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Would write .*paneflow\.js:\n\/\/ paneflow-managed/);
    assert.equal(await exists(file), false, "--dry-run writes nothing");

    r = await cli(["setup", "--agent", "opencode"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /plugin installed/);
    const text = await Deno.readTextFile(file);
    assert.match(text, /^\/\/ paneflow-managed/);
    assert.match(text, /"ai-hook","--tool","opencode"/);
    assert.equal(await exists(`${home}/.config/opencode/plugins/paneflow.js`), false, "XDG_CONFIG_HOME wins");
    assert.equal(
      await Deno.readTextFile(`${xdg}/opencode/opencode.json`),
      userConfig,
      "opencode.json untouched",
    );

    r = await cli(["setup", "--agent", "opencode"]);
    assert.match(r.stdout, /already up to date/);
    r = await cli(["status", "--agent", "opencode", "--json"]);
    const st = JSON.parse(r.stdout);
    assert.equal(st.installed, true);
    assert.deepEqual(st.events.map((e: { event: string }) => e.event), [
      "SessionStart",
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "PermissionRequest",
      "Stop",
      "StopFailure",
    ]);

    // An older version of ours is replaced, the previous one kept as .bak.
    await Deno.writeTextFile(file, "// paneflow-managed: an older version\n");
    r = await cli(["status", "--agent", "opencode"]);
    assert.match(r.stdout, /an older version/);
    r = await cli(["setup", "--agent", "opencode"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await Deno.readTextFile(`${file}.bak`), "// paneflow-managed: an older version\n");
    assert.equal(await Deno.readTextFile(file), text);

    r = await cli(["uninstall", "--agent", "opencode", "--dry-run"]);
    assert.match(r.stdout, /Would remove/);
    assert.equal(await exists(file), true);
    r = await cli(["uninstall", "--agent", "opencode"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /plugin removed/);
    assert.equal(await exists(file), false);
    assert.equal(await Deno.readTextFile(`${file}.bak`), text);
    r = await cli(["uninstall", "--agent", "opencode"]);
    assert.match(r.stdout, /already up to date/);

    // A file of that name that is not ours: refused, untouched, one line.
    const mine = "export const Mine = async () => ({});\n";
    await Deno.writeTextFile(file, mine);
    for (const action of ["setup", "uninstall"]) {
      r = await cli([action, "--agent", "opencode"]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /not paneflow's plugin/);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.equal(await Deno.readTextFile(file), mine);
    }

    // OPENCODE_CONFIG_DIR wins over XDG_CONFIG_HOME.
    const own = `${root}/own`;
    r = await cli(["setup", "--agent", "opencode"], { ...env, OPENCODE_CONFIG_DIR: own });
    assert.equal(r.code, 0, r.stderr);
    assert.match(await Deno.readTextFile(`${own}/plugins/paneflow.js`), /^\/\/ paneflow-managed/);

    // Without --agent, opencode is included when its config dir exists (here with Claude Code's).
    await Deno.mkdir(`${home}/.claude`);
    r = await cli(["status", "--json"], { ...env, OPENCODE_CONFIG_DIR: own });
    const all = JSON.parse(r.stdout) as { agent: string; installed: boolean }[];
    assert.deepEqual(all.map((a) => [a.agent, a.installed]), [["claude", false], ["opencode", true]]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
