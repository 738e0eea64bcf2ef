import assert from "node:assert/strict";
import {
  explainSshFailure,
  parseHostArg,
  relayCommand,
  type RemoteTarget,
  shWord,
  sshArgv,
} from "./ssh_target.ts";

const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });

Deno.test("parseHostArg: ssh:// URLs with user and port, names, and clear errors", () => {
  assert.deepEqual(parseHostArg("ssh://ann@box.example:2222"), {
    kind: "url",
    target: {
      label: "ssh://ann@box.example:2222",
      destination: "ann@box.example",
      port: 2222,
      paneflow: "paneflow",
    },
  });
  assert.deepEqual(parseHostArg("ssh://[::1]").kind, "url");
  assert.equal((parseHostArg("ssh://[::1]") as { target: RemoteTarget }).target.destination, "::1");
  assert.deepEqual(parseHostArg("gpu-1"), { kind: "name", name: "gpu-1" });
  assert.throws(() => parseHostArg("ssh://box:99999"), /port 99999 is out of range/);
  assert.throws(() => parseHostArg("ssh://"), /expected ssh:\/\/\[user@\]host\[:port\]/);
  assert.throws(() => parseHostArg("-oProxyCommand=evil"), /give a name/);
  assert.throws(() => parseHostArg("a b"), /give a name/);
});

Deno.test("sshArgv: the user's ssh with ControlMaster, the destination after --, the relay quoted", () => {
  const t: RemoteTarget = {
    label: "box",
    destination: "ann@box",
    port: 2200,
    paneflow: "~/bin/paneflow",
    socket: "/run/p s",
  };
  const argv = sshArgv(
    t,
    relayCommand(t),
    env({ PANEFLOW_SSH: "/x/ssh", PANEFLOW_SOCKET_PATH: "/r/p.sock" }),
  );
  assert.equal(argv[0], "/x/ssh");
  assert.ok(argv.includes("ControlMaster=auto"));
  assert.ok(argv.includes("ControlPath=/r/ssh-%C"));
  assert.deepEqual(argv.slice(argv.indexOf("-p"), argv.indexOf("-p") + 2), ["-p", "2200"]);
  assert.deepEqual(argv.slice(-3), ["--", "ann@box", "~/bin/paneflow relay --socket '/run/p s'"]);
  assert.equal(shWord("it's"), `'it'\\''s'`);
});

Deno.test("explainSshFailure: one line per failure, naming the host and what to do", () => {
  const t: RemoteTarget = { label: "box", destination: "box", paneflow: "paneflow" };
  assert.match(explainSshFailure(t, 255, "Host key verification failed.\n")!, /host key is unknown.*ssh box/);
  assert.match(
    explainSshFailure(t, 255, "ann@box: Permission denied (publickey).\n")!,
    /authentication was refused/,
  );
  assert.match(
    explainSshFailure(t, 255, "ssh: connect to host box port 22: Connection refused\n")!,
    /Cannot reach host "box": ssh: connect/,
  );
  assert.match(explainSshFailure(t, 127, "sh: 1: paneflow: not found\n")!, /not installed on host "box"/);
  assert.match(
    explainSshFailure(t, 1, "paneflow: No paneflow host answers on /s on box (x); start one\n")!,
    /No paneflow host answers.*\(host "box"\)/,
  );
  assert.match(
    explainSshFailure(
      t,
      1,
      "paneflow: No paneflow host answers on /s on box (No such file or directory (os error 2)); start one\n",
    )!,
    /^No paneflow host answers.*\(host "box"\)/,
  );
  assert.equal(explainSshFailure(t, 0, ""), null);
});

Deno.test("plainJson: JSONC comments and trailing commas go, strings stay", async () => {
  const { plainJson } = await import("./named_hosts.ts");
  const text =
    '{\n  // a comment\n  "a": "x // not a comment, /* nor this */",\n  /* block */ "b": [1, 2,],\n  "c": "q\\"uote",\n}';
  assert.deepEqual(JSON.parse(plainJson(text)), {
    a: "x // not a comment, /* nor this */",
    b: [1, 2],
    c: 'q"uote',
  });
});
