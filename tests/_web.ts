/// <reference lib="dom" />
/**
 * Helpers for the `paneflow web` tests: the web process beside a test host,
 * and a real browser (Debian's chromium driven by playwright-core). Where no
 * chromium is installed the browser tests are skipped with a message saying
 * how to install it (CI installs it in .ci/run).
 *
 * @module
 */
import { chromium } from "playwright-core";
import type { BrowserContext, Page } from "playwright-core";
import { ROOT, type TestHost, waitUntil } from "./_harness.ts";

/** The system Chromium the browser tests drive. */
export const CHROMIUM = Deno.env.get("PANEFLOW_CHROMIUM") ?? "/usr/bin/chromium";

/** Whether the browser tests can run; says why not once. */
export function browserAvailable(): boolean {
  try {
    Deno.statSync(CHROMIUM);
    return true;
  } catch {
    return false;
  }
}

let warned = false;
/** Test options that skip a browser test where no chromium is installed. */
export function browserTest(): { ignore: boolean } {
  const ok = browserAvailable();
  if (!ok && !warned) {
    warned = true;
    console.error(
      `SKIPPED web browser tests: no Chromium at ${CHROMIUM}; install it with: apt-get install -y chromium (or set PANEFLOW_CHROMIUM)`,
    );
  }
  return { ignore: !ok };
}

/** A running `paneflow web`. */
export interface WebProcess {
  /** The URL it printed, with the token. */
  url: string;
  /** The URL without the fragment. */
  base: string;
  token: string;
  pid: number;
  stderr(): string;
  stop(): Promise<void>;
}

/** Starts `paneflow web` against `host` and waits for its URL. */
export async function startWeb(host: TestHost, args: string[] = []): Promise<WebProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", `--config=${ROOT}deno.json`, `${ROOT}main.ts`, "web", ...args],
    env: host.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  let err = "";
  const dec = new TextDecoder();
  const drain = async (s: ReadableStream<Uint8Array>, add: (t: string) => void) => {
    for await (const chunk of s) add(dec.decode(chunk, { stream: true }));
  };
  const drained = Promise.all([
    drain(child.stdout, (t) => (out += t)),
    drain(child.stderr, (t) => (err += t)),
  ]);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const stop = async () => {
    if (!exited) {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
    }
    await status;
    await drained;
  };
  try {
    const url = await waitUntil("paneflow web to print its URL", () => {
      if (exited) throw new Error(`paneflow web exited: ${err}`);
      return /^(http:\/\/\S+#token=\S+)\n/.exec(out)?.[1];
    }, { timeoutMs: 20_000 });
    const [base, token] = url.split("#token=");
    return { url, base, token, pid: child.pid, stderr: () => err, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** A fresh headless Chromium with its own profile. */
export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** Launches Chromium (fresh --user-data-dir) and opens one page. */
export async function launchBrowser(): Promise<Browser> {
  const profile = await Deno.makeTempDir({ prefix: "pf-chromium-" });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const page = context.pages()[0] ?? await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  return {
    context,
    page,
    async close() {
      await context.close().catch(() => {});
      await Deno.remove(profile, { recursive: true }).catch(() => {});
      if (errors.length) throw new Error(`The page threw: ${errors.join("; ")}`);
    },
  };
}

/** The text a tile shows (its xterm rows), or null when there is no such tile. */
export function tileText(page: Page, id: number): Promise<string | null> {
  return page.evaluate((id) => {
    const rows = document.querySelector(`.tile[data-surface-id="${id}"] .xterm-rows`);
    return rows ? [...rows.children].map((r) => r.textContent ?? "").join("\n") : null;
  }, id);
}

/** The tile header's badge: its state class and text. */
export function tileBadge(page: Page, id: number): Promise<{ state: string | null; text: string } | null> {
  return page.evaluate((id) => {
    const b = document.querySelector<HTMLElement>(`.tile[data-surface-id="${id}"] .badge`);
    if (!b || b.style.display === "none") return null;
    return { state: b.dataset.state ?? null, text: b.textContent ?? "" };
  }, id);
}

/** Waits until a tile shows `needle`. */
export function waitTile(
  page: Page,
  id: number,
  needle: string | RegExp,
  timeoutMs = 10_000,
): Promise<string> {
  return waitUntil(`tile ${id} to show ${needle}`, async () => {
    const t = await tileText(page, id);
    if (t === null) return false;
    return (typeof needle === "string" ? t.includes(needle) : needle.test(t)) ? t : false;
  }, { timeoutMs, intervalMs: 50 });
}
