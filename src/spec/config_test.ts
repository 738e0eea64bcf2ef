import assert from "node:assert/strict";
import { configPath, DEFAULT_PANE_WORKERS, defaultEngine, loadConfig, parseConfig } from "./config.ts";

const FILE = "/home/u/.config/paneflow/config.jsonc";

const DEFAULTS = {
  ai_unrestricted: false,
  ai_injection_fence: true,
  submit_paste_delay_ms: 70,
  agent_stall_threshold_secs: 120,
  tmux_compat: false,
  terminal: {
    env: {},
    cols: 200,
    rows: 50,
    scrollback_lines: 10_000,
    engine: defaultEngine(),
    kill_grace_ms: 2000,
  },
  agents: {},
  hosts: {},
  host: { pane_workers: DEFAULT_PANE_WORKERS, idle_timeout_secs: 30, heartbeat_secs: 30 },
  paneio: { prompt_patterns: [] },
  queue: { grace_secs: 30, timeout_secs: 3600 },
  caps: { pane: {}, guest: {}, detached: "guest" },
  restore: { mode: "ask", history_lines: 2000 },
  notify: { rules: [], sinks: {}, link_ttl_secs: 3600 },
  usage: { prices: {} },
};

function fails(text: string, message: string) {
  assert.throws(() => parseConfig(text, FILE), (e: unknown) => {
    assert.ok(e instanceof Error);
    assert.equal(e.message, message);
    return true;
  }, JSON.stringify(text));
}

Deno.test("parseConfig fills every default", () => {
  assert.deepEqual(parseConfig("{}", FILE), DEFAULTS);
});

Deno.test("parseConfig: an empty or all-comment file means the defaults", () => {
  for (const text of ["", "  \n\n", "// nothing yet\n", "/* later */", "// a\n/* b */\n"]) {
    assert.deepEqual(parseConfig(text, FILE), DEFAULTS, JSON.stringify(text));
  }
});

Deno.test("parseConfig keeps given values and defaults the rest", () => {
  const config = parseConfig(
    `{
      "ai_unrestricted": true,
      "submit_paste_delay_ms": 0,
      "terminal": { "env": { "FOO": "bar" }, "rows": 30, "shell": "/bin/zsh" },
      "agents": { "claude": { "command": "claude --dangerously-skip-permissions" } },
      "host": { "pane_workers": 4 },
    }`,
    FILE,
  );
  assert.deepEqual(config, {
    ...DEFAULTS,
    ai_unrestricted: true,
    submit_paste_delay_ms: 0,
    terminal: {
      env: { FOO: "bar" },
      cols: 200,
      rows: 30,
      scrollback_lines: 10_000,
      engine: defaultEngine(),
      kill_grace_ms: 2000,
      shell: "/bin/zsh",
    },
    agents: { claude: { command: "claude --dangerously-skip-permissions" } },
    host: { pane_workers: 4, idle_timeout_secs: 30, heartbeat_secs: 30 },
  });
});

Deno.test("parseConfig accepts comments and trailing commas", () => {
  const config = parseConfig(
    `// paneflow config
    {
      /* the fence */ "ai_injection_fence": false, // off
      "terminal": { "cols": 120, },
    }
    `,
    FILE,
  );
  assert.equal(config.ai_injection_fence, false);
  assert.equal(config.terminal.cols, 120);
});

Deno.test("parseConfig: an unknown key names the key and the file", () => {
  fails(`{"ai_unrestrcted": true}`, `Unknown config key "ai_unrestrcted" in ${FILE}`);
  fails(`{"terminal": {"foo": 1}}`, `Unknown config key "terminal.foo" in ${FILE}`);
  fails(`{"host": {"workers": 1}}`, `Unknown config key "host.workers" in ${FILE}`);
  fails(
    `{"agents": {"claude": {"command": "claude", "args": []}}}`,
    `Unknown config key "agents.claude.args" in ${FILE}`,
  );
});

Deno.test("parseConfig: a wrong type names the key, the file and the expectation", () => {
  fails(
    `{"ai_unrestricted": "yes"}`,
    `Invalid config key "ai_unrestricted" in ${FILE}: Invalid input: expected boolean, received string`,
  );
  fails(
    `{"submit_paste_delay_ms": 1.5}`,
    `Invalid config key "submit_paste_delay_ms" in ${FILE}: Invalid input: expected int, received number`,
  );
  fails(
    `{"terminal": {"env": {"A": 1}}}`,
    `Invalid config key "terminal.env.A" in ${FILE}: Invalid input: expected string, received number`,
  );
  fails(
    `{"terminal": 5}`,
    `Invalid config key "terminal" in ${FILE}: Invalid input: expected object, received number`,
  );
  fails(
    `{"terminal": {"cols": 1}}`,
    `Invalid config key "terminal.cols" in ${FILE}: Too small: expected number to be >=2`,
  );
  fails(`[]`, `Invalid config ${FILE}: Invalid input: expected object, received array`);
  fails(`null`, `Invalid config ${FILE}: Invalid input: expected object, received null`);
});

Deno.test("parseConfig: a syntax error gives line and column", () => {
  fails(`{\n  "a": 1\n  "b": 2}`, `Invalid config ${FILE}:3:3: CommaExpected`);
  fails(`{"ai_unrestricted": }`, `Invalid config ${FILE}:1:21: ValueExpected`);
  fails(`{\n\n    "x": tru\n}`, `Invalid config ${FILE}:3:10: InvalidSymbol`);
  fails(`/* never closed`, `Invalid config ${FILE}:1:1: UnexpectedEndOfComment`);
  fails(`{} {}`, `Invalid config ${FILE}:1:4: EndOfFileExpected`);
});

Deno.test("configPath: $PANEFLOW_CONFIG, then XDG_CONFIG_HOME, then HOME", () => {
  const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });
  assert.equal(
    configPath(env({ PANEFLOW_CONFIG: "/x.jsonc", XDG_CONFIG_HOME: "/xdg", HOME: "/h" })),
    "/x.jsonc",
  );
  assert.equal(configPath(env({ XDG_CONFIG_HOME: "/xdg", HOME: "/h" })), "/xdg/paneflow/config.jsonc");
  assert.equal(configPath(env({ HOME: "/h" })), "/h/.config/paneflow/config.jsonc");
});

Deno.test("loadConfig: a missing file gives the defaults, a present one is parsed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "paneflow_cfg_" });
  try {
    assert.deepEqual(await loadConfig(`${dir}/missing.jsonc`), DEFAULTS);
    await Deno.writeTextFile(`${dir}/c.jsonc`, `{"terminal": {"bogus": true}}`);
    await assert.rejects(loadConfig(`${dir}/c.jsonc`), {
      message: `Unknown config key "terminal.bogus" in ${dir}/c.jsonc`,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parseConfig: named remote hosts get their defaults; a bad name or a missing ssh is named", () => {
  const config = parseConfig('{"hosts": {"gpu": {"ssh": "ann@gpu-1"}}}', FILE);
  assert.deepEqual(config.hosts, { gpu: { ssh: "ann@gpu-1", paneflow: "paneflow" } });
  assert.throws(() => parseConfig('{"hosts": {"a b": {"ssh": "x"}}}', FILE), /hosts/);
  assert.throws(() => parseConfig('{"hosts": {"gpu": {}}}', FILE), /hosts\.gpu\.ssh/);
  assert.throws(() => parseConfig('{"hosts": {"gpu": {"ssh": "x", "port": 2}}}', FILE), /hosts\.gpu\.port/);
});

Deno.test("parseConfig: a notify rule naming a sink the config lacks", () => {
  fails(
    '{"notify": {"sinks": {"a": {"type": "desktop"}}, "rules": [{"when": ["errored"], "to": ["a", "b"]}]}}',
    `Invalid config key "notify.rules.0.to.1" in ${FILE}: no sink named "b"`,
  );
  fails(
    '{"notify": {"sinks": {"a": {"type": "pager"}}}}',
    `Invalid config key "notify.sinks.a.type" in ${FILE}: Invalid discriminator value. Expected 'webhook' | 'slack' | 'ntfy' | 'command' | 'desktop'`,
  );
});

Deno.test("terminal.engine: xterm by default, PANEFLOW_ENGINE sets the default, a bad name is named", () => {
  const before = Deno.env.get("PANEFLOW_ENGINE");
  try {
    Deno.env.delete("PANEFLOW_ENGINE");
    assert.equal(parseConfig("{}", FILE).terminal.engine, "xterm");
    Deno.env.set("PANEFLOW_ENGINE", "ghostty");
    assert.equal(parseConfig("{}", FILE).terminal.engine, "ghostty");
    assert.equal(parseConfig('{"terminal":{"engine":"xterm"}}', FILE).terminal.engine, "xterm");
    assert.throws(() => parseConfig('{"terminal":{"engine":"vt100"}}', FILE), /terminal\.engine/);
  } finally {
    if (before === undefined) Deno.env.delete("PANEFLOW_ENGINE");
    else Deno.env.set("PANEFLOW_ENGINE", before);
  }
});
