import assert from "node:assert/strict";
import { parse as parseJsonc } from "jsonc-parser";
import { parse as parseTomlRaw } from "smol-toml";
import {
  agentConfigs,
  applyAll,
  type BridgeCommand,
  ConfigParseError,
  entryFor,
  type FsProbe,
  readEntry,
  statusAll,
  withEntry,
  withoutEntry,
} from "./install.ts";

const CMD: BridgeCommand = { command: "/opt/paneflow/bin/paneflow", args: ["mcp"] };
const DEV: BridgeCommand = {
  command: "/usr/local/bin/deno",
  args: ["run", "-A", "--quiet", "--config=/src/pf/deno.json", "/src/pf/main.ts", "mcp"],
};

/** TOML as plain objects (smol-toml's tables have a null prototype). */
function parseToml(text: string) {
  return JSON.parse(JSON.stringify(parseTomlRaw(text)));
}

function env(vars: Record<string, string>) {
  return { get: (k: string) => vars[k] };
}

function fakeFs(files: string[], dirs: string[] = []): FsProbe {
  return { isFile: (p) => files.includes(p), isDir: (p) => dirs.includes(p) };
}

function throwsParse(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ConfigParseError, `expected ConfigParseError, got ${e}`);
    assert.match(e.message, pattern);
    return true;
  });
}

// ------------------------------------------------------------ locations

Deno.test("agentConfigs: the default locations", () => {
  const cfgs = agentConfigs(env({ HOME: "/h" }), fakeFs([]));
  assert.deepEqual(cfgs.map((c) => [c.agent, c.file, c.dir]), [
    ["claude", "/h/.claude.json", "/h/.claude"],
    ["codex", "/h/.codex/config.toml", "/h/.codex"],
    ["gemini", "/h/.gemini/settings.json", "/h/.gemini"],
    ["opencode", "/h/.config/opencode/opencode.json", "/h/.config/opencode"],
  ]);
});

Deno.test("agentConfigs: CLAUDE_CONFIG_DIR, CODEX_HOME and XDG_CONFIG_HOME move the files", () => {
  const cfgs = agentConfigs(
    env({ HOME: "/h", CLAUDE_CONFIG_DIR: "/c", CODEX_HOME: "/x", XDG_CONFIG_HOME: "/xdg" }),
    fakeFs([]),
  );
  assert.deepEqual(cfgs.map((c) => c.file), [
    "/c/.claude.json",
    "/x/config.toml",
    "/h/.gemini/settings.json",
    "/xdg/opencode/opencode.json",
  ]);
});

Deno.test("agentConfigs: Claude's legacy .config.json and opencode.jsonc when only they exist", () => {
  const cfgs = agentConfigs(
    env({ HOME: "/h" }),
    fakeFs(["/h/.claude/.config.json", "/h/.config/opencode/opencode.jsonc"]),
  );
  assert.equal(cfgs[0].file, "/h/.claude/.config.json");
  assert.equal(cfgs[3].file, "/h/.config/opencode/opencode.jsonc");
  const both = agentConfigs(env({ HOME: "/h" }), fakeFs(["/h/.claude.json", "/h/.claude/.config.json"]));
  assert.equal(both[0].file, "/h/.claude.json");
});

// ------------------------------------------------------------ entries

Deno.test("entryFor: each agent's documented shape", () => {
  assert.deepEqual(entryFor("claude", CMD), { type: "stdio", command: CMD.command, args: ["mcp"] });
  assert.deepEqual(entryFor("codex", CMD), { command: CMD.command, args: ["mcp"] });
  assert.deepEqual(entryFor("gemini", CMD), { command: CMD.command, args: ["mcp"] });
  assert.deepEqual(entryFor("opencode", CMD), {
    type: "local",
    command: [CMD.command, "mcp"],
    enabled: true,
  });
  const pinned = { ...CMD, env: { PANEFLOW_SOCKET_PATH: "/s" } };
  assert.deepEqual(entryFor("claude", pinned).env, { PANEFLOW_SOCKET_PATH: "/s" });
  assert.deepEqual(entryFor("opencode", pinned).environment, { PANEFLOW_SOCKET_PATH: "/s" });
});

// ------------------------------------------------------------ Claude Code (JSON)

const CLAUDE = `{
  "numStartups": 3,
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "gh-mcp",
      "args": []
    }
  },
  "projects": {
    "/work": {
      "allowedTools": []
    }
  }
}
`;

Deno.test("claude: install adds our entry and leaves every other key as it was", () => {
  const edit = withEntry("claude", "f", CLAUDE, DEV);
  assert.ok(edit.changed);
  const before = JSON.parse(CLAUDE);
  const after = JSON.parse(edit.text);
  assert.deepEqual(after.mcpServers.paneflow, { type: "stdio", command: DEV.command, args: DEV.args });
  delete after.mcpServers.paneflow;
  assert.deepEqual(after, before);
  // The rest of the text is untouched (formatting and key order too).
  assert.ok(edit.text.startsWith(`{\n  "numStartups": 3,\n  "mcpServers": {\n    "github": {`));
  assert.ok(edit.text.includes(`\n    "paneflow": {\n      "type": "stdio",\n`));
});

Deno.test("claude: install is idempotent and updates a stale command", () => {
  const once = withEntry("claude", "f", CLAUDE, DEV).text;
  const twice = withEntry("claude", "f", once, DEV);
  assert.equal(twice.changed, false);
  assert.equal(twice.text, once);
  const moved = withEntry("claude", "f", once, CMD);
  assert.ok(moved.changed);
  assert.deepEqual(JSON.parse(moved.text).mcpServers.paneflow.command, CMD.command);
  assert.deepEqual(JSON.parse(moved.text).mcpServers.github, JSON.parse(CLAUDE).mcpServers.github);
});

Deno.test("claude: uninstall removes only our entry", () => {
  const installed = withEntry("claude", "f", CLAUDE, DEV).text;
  const removed = withoutEntry("claude", "f", installed);
  assert.ok(removed.changed);
  assert.deepEqual(JSON.parse(removed.text), JSON.parse(CLAUDE));
  assert.equal(withoutEntry("claude", "f", removed.text).changed, false);
  assert.equal(withoutEntry("claude", "f", null).changed, false);
});

Deno.test("claude: a missing or empty file becomes a config with only our entry", () => {
  for (const text of [null, "", "  \n"]) {
    const edit = withEntry("claude", "f", text, CMD);
    assert.deepEqual(JSON.parse(edit.text), { mcpServers: { paneflow: entryFor("claude", CMD) } });
  }
  assert.equal(readEntry("claude", "f", null), undefined);
});

Deno.test("claude: unparseable configs are refused with the file and the position", () => {
  throwsParse(
    () => withEntry("claude", "/h/.claude.json", `{\n  "a": 1,\n  "b": \n}`, CMD),
    /^Cannot read \/h\/\.claude\.json: ValueExpected at line 4, column 1; fix or move the file/,
  );
  throwsParse(() => withEntry("claude", "f", `{ // comment\n}`, CMD), /InvalidCommentToken at line 1/);
  throwsParse(() => withEntry("claude", "f", `[1, 2]`, CMD), /the top level is not a JSON object/);
  throwsParse(() => withEntry("claude", "f", `{"mcpServers": []}`, CMD), /"mcpServers" is not an object/);
  throwsParse(() => withoutEntry("claude", "f", `{"mcpServers": {`), /CloseBraceExpected|ValueExpected/);
});

// ------------------------------------------------------------ Gemini and opencode (JSONC)

Deno.test("gemini: comments and tab indentation survive install and uninstall", () => {
  const text = `{\n\t// my theme\n\t"theme": "Dracula",\n\t"mcpServers": {},\n}\n`;
  const edit = withEntry("gemini", "f", text, CMD);
  assert.ok(edit.text.includes("// my theme"));
  assert.ok(edit.text.includes(`\t"mcpServers": {\n\t\t"paneflow": {`));
  const value = parseJsonc(edit.text);
  assert.deepEqual(value.mcpServers.paneflow, { command: CMD.command, args: ["mcp"] });
  const back = withoutEntry("gemini", "f", edit.text).text;
  assert.ok(back.includes("// my theme"));
  assert.deepEqual(parseJsonc(back), { theme: "Dracula", mcpServers: {} });
});

Deno.test("opencode: the documented local-server shape under the mcp key", () => {
  const text =
    `{\n  "$schema": "https://opencode.ai/config.json",\n  "mcp": {\n    "other": {"type": "remote", "url": "https://x"}\n  }\n}\n`;
  const edit = withEntry("opencode", "f", text, DEV);
  const value = parseJsonc(edit.text);
  assert.equal(value.$schema, "https://opencode.ai/config.json");
  assert.deepEqual(value.mcp.other, { type: "remote", url: "https://x" });
  assert.deepEqual(value.mcp.paneflow, { type: "local", command: [DEV.command, ...DEV.args], enabled: true });
  assert.deepEqual(parseJsonc(withoutEntry("opencode", "f", edit.text).text), parseJsonc(text));
});

// ------------------------------------------------------------ Codex (TOML)

const CODEX = `# my codex config
model = "o3"

[mcp_servers.docs]
command = "docs-mcp" # keep me
args = []

[projects."/work/x"]
trust_level = "trusted"
`;

Deno.test("codex: install appends our table and keeps comments and other tables", () => {
  const edit = withEntry("codex", "f", CODEX, DEV);
  assert.ok(edit.changed);
  assert.equal(edit.rewritten, false);
  assert.ok(edit.text.startsWith(CODEX), "the user's text is kept byte for byte");
  assert.ok(
    edit.text.includes(
      `trusted"\n\n[mcp_servers.paneflow]\ncommand = "/usr/local/bin/deno"\nargs = ["run", "-A", `,
    ),
  );
  const value = parseToml(edit.text) as Record<string, Record<string, unknown>>;
  assert.deepEqual(value.mcp_servers.paneflow, { command: DEV.command, args: DEV.args });
  assert.deepEqual(value.mcp_servers.docs, { command: "docs-mcp", args: [] });
  assert.equal(withEntry("codex", "f", edit.text, DEV).changed, false);
});

Deno.test("codex: update replaces our table in place of the old one; uninstall restores the text", () => {
  const first = withEntry("codex", "f", CODEX, CMD).text;
  const second = withEntry("codex", "f", first, DEV);
  assert.ok(second.changed);
  const value = parseToml(second.text) as Record<string, Record<string, Record<string, unknown>>>;
  assert.equal(value.mcp_servers.paneflow.command, DEV.command);
  assert.equal(second.text.match(/\[mcp_servers\.paneflow\]/g)?.length, 1);
  assert.equal(withoutEntry("codex", "f", second.text).text, CODEX);
});

Deno.test("codex: our table in the middle, with a sub-table, is cut cleanly", () => {
  const text = `a = 1

[mcp_servers.paneflow]
command = "old"
args = []

[mcp_servers.paneflow.env]
X = "1"

# the next table's comment
[mcp_servers.other]
command = "o"
`;
  const out = withoutEntry("codex", "f", text);
  assert.equal(out.text, `a = 1\n\n# the next table's comment\n[mcp_servers.other]\ncommand = "o"\n`);
  const env = withEntry("codex", "f", "", { ...CMD, env: { PANEFLOW_SOCKET_PATH: "/run/x.sock" } });
  assert.equal(
    env.text,
    `[mcp_servers.paneflow]\ncommand = "/opt/paneflow/bin/paneflow"\nargs = ["mcp"]\nenv = { PANEFLOW_SOCKET_PATH = "/run/x.sock" }\n`,
  );
});

Deno.test("codex: an inline-table entry is replaced by re-serializing, and says so", () => {
  const text = `[mcp_servers]\npaneflow = { command = "old", args = [] }\nother = { command = "o" }\n`;
  const edit = withEntry("codex", "f", text, CMD);
  assert.equal(edit.rewritten, true);
  const value = parseToml(edit.text) as Record<string, Record<string, unknown>>;
  assert.deepEqual(value.mcp_servers.paneflow, { command: CMD.command, args: ["mcp"] });
  assert.deepEqual(value.mcp_servers.other, { command: "o" });
  const gone = withoutEntry("codex", "f", edit.text);
  assert.deepEqual(parseToml(gone.text), { mcp_servers: { other: { command: "o" } } });
});

Deno.test("codex: unparseable TOML is refused with the file and the position", () => {
  throwsParse(
    () => withEntry("codex", "/h/.codex/config.toml", `model = "o3"\n[mcp_servers\n`, CMD),
    /^Cannot read \/h\/\.codex\/config\.toml: .* at line 2, column \d+; fix or move the file/,
  );
  throwsParse(() => withEntry("codex", "f", `mcp_servers = 3\n`, CMD), /"mcp_servers" is not a table/);
});

// ------------------------------------------------------------ effects on a temp HOME

async function tempHome(): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix: "pf-mcp-home-" }));
}

async function listDir(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}

Deno.test("applyAll: installs only where agents are set up, backs up, is idempotent, uninstalls", async () => {
  const home = await tempHome();
  try {
    await Deno.writeTextFile(`${home}/.claude.json`, CLAUDE, { mode: 0o600 });
    await Deno.mkdir(`${home}/.codex`);
    await Deno.writeTextFile(`${home}/.codex/config.toml`, CODEX);
    await Deno.mkdir(`${home}/.config/opencode`, { recursive: true }); // dir without a file
    const run = { env: env({ HOME: home }), command: DEV };

    const first = await applyAll("install", run);
    assert.deepEqual(first.map((r) => [r.agent, r.action]), [
      ["claude", "added"],
      ["codex", "added"],
      ["gemini", "skipped"],
      ["opencode", "added"],
    ]);
    assert.equal(await Deno.readTextFile(`${home}/.claude.json.bak`), CLAUDE);
    assert.equal(await Deno.readTextFile(`${home}/.codex/config.toml.bak`), CODEX);
    assert.equal(first[3].backup, undefined, "no backup of a file that did not exist");
    assert.equal((await Deno.stat(`${home}/.claude.json`)).mode! & 0o777, 0o600);
    assert.deepEqual(await listDir(home), [".claude.json", ".claude.json.bak", ".codex", ".config"]);
    assert.deepEqual(await listDir(`${home}/.codex`), ["config.toml", "config.toml.bak"]);
    assert.equal(await Deno.stat(`${home}/.gemini`).catch(() => null), null, "gemini was not created");

    const claude = JSON.parse(await Deno.readTextFile(`${home}/.claude.json`));
    assert.deepEqual(claude.mcpServers.paneflow, { type: "stdio", command: DEV.command, args: DEV.args });
    assert.deepEqual(claude.mcpServers.github, JSON.parse(CLAUDE).mcpServers.github);

    const snapshot = await Deno.readTextFile(`${home}/.claude.json`);
    const again = await applyAll("install", run);
    assert.deepEqual(again.map((r) => r.action), ["unchanged", "unchanged", "skipped", "unchanged"]);
    assert.equal(await Deno.readTextFile(`${home}/.claude.json`), snapshot);
    assert.equal(
      await Deno.readTextFile(`${home}/.claude.json.bak`),
      CLAUDE,
      "an unchanged run keeps the backup",
    );

    const status = await statusAll(run);
    assert.deepEqual(status.map((r) => [r.agent, r.installed, r.current]), [
      ["claude", true, true],
      ["codex", true, true],
      ["gemini", false, false],
      ["opencode", true, true],
    ]);
    const other = await statusAll({ ...run, command: CMD });
    assert.deepEqual(other.map((r) => r.current), [false, false, false, false]);

    const gone = await applyAll("uninstall", run);
    assert.deepEqual(gone.map((r) => r.action), ["removed", "removed", "skipped", "removed"]);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(`${home}/.claude.json`)), JSON.parse(CLAUDE));
    assert.equal(await Deno.readTextFile(`${home}/.codex/config.toml`), CODEX);
    assert.deepEqual(parseJsonc(await Deno.readTextFile(`${home}/.config/opencode/opencode.json`)), {
      mcp: {},
    });
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("applyAll: an unparseable file is never written over; the others still install", async () => {
  const home = await tempHome();
  try {
    const broken = `{"numStartups": 3,,}`;
    await Deno.writeTextFile(`${home}/.claude.json`, broken);
    await Deno.mkdir(`${home}/.gemini`);
    const reports = await applyAll("install", { env: env({ HOME: home }), command: CMD });
    assert.equal(reports[0].action, "error");
    assert.match(
      reports[0].error!,
      new RegExp(`^Cannot read ${home}/\\.claude\\.json: .* at line 1, column \\d+`),
    );
    assert.equal(await Deno.readTextFile(`${home}/.claude.json`), broken);
    assert.equal(await Deno.stat(`${home}/.claude.json.bak`).catch(() => null), null);
    assert.equal(reports[2].action, "added");
    const status = await statusAll({ env: env({ HOME: home }), command: CMD });
    assert.equal(status[0].action, "error");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("applyAll: --dry-run reports and writes nothing; --agent limits; symlinks stay links", async () => {
  const home = await tempHome();
  try {
    await Deno.mkdir(`${home}/dotfiles`);
    await Deno.writeTextFile(`${home}/dotfiles/claude.json`, "{}\n");
    await Deno.symlink(`${home}/dotfiles/claude.json`, `${home}/.claude.json`);
    await Deno.mkdir(`${home}/.gemini`);
    const run = { env: env({ HOME: home }), command: CMD };

    const dry = await applyAll("install", { ...run, dryRun: true });
    assert.deepEqual(dry.map((r) => [r.action, r.installed]), [
      ["added", false],
      ["skipped", false],
      ["added", false],
      ["skipped", false],
    ]);
    assert.equal(await Deno.readTextFile(`${home}/.claude.json`), "{}\n");
    assert.deepEqual(await listDir(`${home}/.gemini`), []);

    const only = await applyAll("install", { ...run, agents: ["claude"] });
    assert.deepEqual(only.map((r) => [r.agent, r.action]), [["claude", "added"]]);
    assert.ok((await Deno.lstat(`${home}/.claude.json`)).isSymlink, "the symlink was kept");
    const target = JSON.parse(await Deno.readTextFile(`${home}/dotfiles/claude.json`));
    assert.deepEqual(target.mcpServers.paneflow, entryFor("claude", CMD));
    assert.deepEqual(await listDir(`${home}/dotfiles`), ["claude.json"]);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("applyAll: CLAUDE_CONFIG_DIR is where Claude Code reads .claude.json", async () => {
  const home = await tempHome();
  try {
    await Deno.mkdir(`${home}/cfg`);
    const reports = await applyAll("install", {
      env: env({ HOME: home, CLAUDE_CONFIG_DIR: `${home}/cfg` }),
      command: CMD,
      agents: ["claude"],
    });
    assert.equal(reports[0].file, `${home}/cfg/.claude.json`);
    const value = JSON.parse(await Deno.readTextFile(`${home}/cfg/.claude.json`));
    assert.deepEqual(value, { mcpServers: { paneflow: entryFor("claude", CMD) } });
    assert.equal(await Deno.stat(`${home}/.claude.json`).catch(() => null), null);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
