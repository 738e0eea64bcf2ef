import assert from "node:assert/strict";
import { classify, type HostFacts, parseProcStat, type ProcInfo, type ProcReader } from "./identify.ts";

/** A process table: pid → [ppid, session, tty, start, comm, environ]. */
type Row = [number, number, number, number, string, string[]?];

function reader(rows: Record<number, Row>): ProcReader {
  return {
    stat: (pid) => {
      const r = rows[pid];
      return r
        ? { ppid: r[0], pgrp: pid, session: r[1], tty: r[2], start: r[3], comm: r[4] } as ProcInfo
        : null;
    },
    environ: (pid) => rows[pid]?.[5] ?? [],
  };
}

const host: HostFacts = {
  pid: 100,
  uid: 1000,
  start: 500,
  hostId: "h1",
  socketPath: "/s.sock",
  panes: [{ id: 7, pid: 200 }],
};
const peer = (pid: number, uid = 1000) => ({ pid, uid, gid: uid });

Deno.test("identify: the rules in order", () => {
  const rows: Record<number, Row> = {
    50: [1, 50, 0, 10, "sshd"],
    60: [50, 60, 34816, 20, "bash"], // the owner's login shell, with a terminal
    61: [60, 60, 34816, 600, "paneflow"],
    100: [60, 60, 34816, 500, "deno"], // the host
    101: [100, 60, 34816, 510, "git"], // a child of the host outside every pane
    200: [100, 200, 34817, 520, "bash"], // pane 7's root
    201: [200, 200, 34817, 530, "paneflow"], // in the pane's session
    210: [200, 210, 0, 540, "sh"], // setsid without a fork: its parent is the pane's root
    300: [1, 300, 0, 700, "sh", ["PANEFLOW_HOST_ID=h1"]], // left the session, kept the marker
    301: [300, 300, 0, 710, "paneflow"],
    400: [1, 400, 0, 800, "sh"], // left, cleared, orphaned: detached after the host
    401: [400, 400, 0, 810, "paneflow"],
    450: [1, 450, 0, 5, "cron"], // a daemon older than the host
    451: [450, 450, 0, 900, "paneflow"],
    500: [1, 500, 0, 5, "systemd"],
    501: [500, 501, 0, 950, "paneflow"], // adopted by a subreaper after the host started
  };
  const p = reader(rows);
  const kind = (pid: number, uid?: number) => {
    const c = classify(peer(pid, uid), host, p);
    return c.kind === "pane" ? `pane ${c.surface_id}` : c.kind;
  };
  assert.equal(kind(61), "owner");
  assert.equal(kind(61, 0), "guest", "another uid");
  assert.equal(kind(100), "host");
  assert.equal(kind(101), "host");
  assert.equal(kind(201), "pane 7");
  assert.equal(kind(210), "pane 7");
  assert.equal(kind(301), "guest");
  assert.match(classify(peer(301), host, p).rule, /ancestor 300 carries this host's PANEFLOW_HOST_ID/);
  assert.equal(kind(401), "guest");
  assert.match(classify(peer(401), host, p).rule, /ancestor 400 was detached/);
  assert.equal(classify(peer(401), { ...host, detached: "owner" }, p).kind, "owner", "caps.detached = owner");
  assert.equal(kind(451), "owner", "an older daemon is the owner's");
  assert.equal(kind(501), "guest", "a subreaper's child started after the host");
  assert.equal(kind(999), "guest", "a process that cannot be read");
});

Deno.test("identify: /proc/<pid>/stat with spaces and parentheses in the name", () => {
  const st = parseProcStat("42 (a (b) c) S 7 42 40 34816 42 4194304 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0");
  assert.deepEqual(st, { ppid: 7, pgrp: 42, session: 40, tty: 34816, start: 12345, comm: "a (b) c" });
});
