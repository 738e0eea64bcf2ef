/**
 * `surface.screen` (the screen with colours, for `paneflow web`): replaying
 * its ANSI into a fresh terminal gives the host's screen back — colours,
 * wide characters, the alternate screen, the cursor — and a caller that shows
 * the current generation gets `unchanged` without a serialization.
 */
import assert from "node:assert/strict";
import xterm from "@xterm/headless";
import type { Result } from "../src/spec/results.ts";
import { type TestHost, waitUntil, withHost } from "./_harness.ts";

/** A screen sent whole (not `unchanged`). */
type Screen = Extract<Result<"surface.screen">, { unchanged: false }>;

/** `surface.screen` without `since`: always the whole screen. */
async function screen(host: TestHost, params: { surface_id: number; scrollback?: number }): Promise<Screen> {
  const r = await host.call("surface.screen", params);
  assert.ok(!r.unchanged, "a screen asked for without since is sent whole");
  return r;
}

function replay(s: Screen): Promise<xterm.Terminal> {
  const term = new xterm.Terminal({ cols: s.cols, rows: s.rows, scrollback: 10_000, allowProposedApi: true });
  return new Promise((resolve) => term.write(s.ansi, () => resolve(term)));
}

Deno.test("surface.screen replays into the same screen: colours, wide characters, cursor, alternate screen", async () => {
  await withHost({}, async (host) => {
    const { surface_id: id } = await host.call("workspace.create", {
      command: `printf '\\033[31mred\\033[0m \\033[1;48;5;21mbold-on-blue\\033[0m 漢字!\\n'; ` +
        `for i in $(seq 1 60); do echo "line $i"; done; printf 'tail'; exec sleep 60`,
    });
    const s = await waitUntil("the output", async () => {
      const r = await screen(host, { surface_id: id });
      return r.ansi.includes("tail") ? r : false;
    });
    assert.equal(s.unchanged, false);
    assert.equal(s.alternate_screen, false);
    assert.equal(s.scrollback, 0);
    const term = await replay(s);
    const buf = term.buffer.active;
    const last = buf.getLine(buf.cursorY)!.translateToString(true);
    assert.equal(last, "tail");
    assert.deepEqual(s.cursor, { x: 4, y: buf.cursorY });
    assert.equal(buf.cursorX, 4);
    // Nothing quiet is serialized again.
    const again = await host.call("surface.screen", { surface_id: id, since: s.generation });
    assert.equal(again.unchanged, true);
    assert.equal("ansi" in again, false);
    // With scrollback: the first line, its colours and the wide characters come back.
    const full = await screen(host, { surface_id: id, scrollback: 5000 });
    assert.ok(full.scrollback >= 10, `scrollback ${full.scrollback}`);
    const t2 = await replay(full);
    const b2 = t2.buffer.active;
    let first = -1;
    for (let y = 0; y < b2.length; y++) {
      if (b2.getLine(y)!.translateToString(true).startsWith("red ")) first = y;
    }
    assert.ok(first >= 0, "the first line is in the scrollback");
    const row = b2.getLine(first)!;
    assert.equal(row.translateToString(true), "red bold-on-blue 漢字!");
    assert.equal(row.getCell(0)!.getFgColor(), 1); // red, palette 1
    const blue = row.getCell(4)!;
    assert.ok(blue.isBold());
    assert.equal(blue.getBgColor(), 21);
    assert.equal(row.getCell(17)!.getWidth(), 2); // 漢 is wide

    // Rows older than xterm's own buffer (the compact scrollback) come back as text.
    const { surface_id: long } = await host.call("workspace.create", {
      command: `for i in $(seq 1 400); do echo "row $i"; done; exec sleep 60`,
    });
    const deep = await waitUntil("400 rows", async () => {
      const r = await screen(host, { surface_id: long, scrollback: 5000 });
      return r.ansi.includes("row 400") ? r : false;
    });
    assert.ok(deep.scrollback >= 350, `scrollback ${deep.scrollback}`);
    const t3 = await replay(deep);
    const texts: string[] = [];
    for (let y = 0; y < t3.buffer.active.length; y++) {
      texts.push(t3.buffer.active.getLine(y)!.translateToString(true));
    }
    assert.ok(texts.includes("row 1") && texts.includes("row 200") && texts.includes("row 400"));
    assert.equal(texts.filter((t) => /^row \d+$/.test(t)).length, 400);
  });
});

Deno.test("surface.screen: the alternate screen and a hidden cursor; sizes follow a split", async () => {
  await withHost({}, async (host) => {
    const { surface_id: id } = await host.call("workspace.create", {
      command: `printf 'normal-text\\n\\033[?1049h\\033[?25l\\033[5;3Hin-alt'; exec sleep 60`,
    });
    const s = await waitUntil("the alternate screen", async () => {
      const r = await screen(host, { surface_id: id });
      return r.alternate_screen && r.ansi.includes("in-alt") ? r : false;
    });
    assert.equal(s.cursor_visible, false);
    const term = await replay(s);
    assert.equal(term.buffer.active.type, "alternate");
    assert.equal(term.buffer.active.getLine(4)!.translateToString(true), "  in-alt");
    assert.equal(s.cols, 200);
    await host.call("surface.split", { direction: "h", surface_id: id, command: "exec sleep 60" });
    const narrower = await waitUntil("the resize", async () => {
      const r = await screen(host, { surface_id: id });
      return r.cols < 200 ? r : false;
    });
    assert.ok(narrower.cols <= 100, `cols ${narrower.cols}`);
    const bad = await host.rpc("surface.screen", { surface_id: id, scrollback: "all" });
    assert.match(JSON.stringify(bad.error), /scrollback/);
  });
});
