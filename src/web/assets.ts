/**
 * The page's files, embedded by import (so `deno compile` carries them and
 * nothing is read from disk at run time): xterm.js and its CSS from the
 * @xterm/xterm package, our own script and CSS, and the loader page.
 *
 * The loader at `/` is the only thing served without the token: a fragment
 * (`#token=...`) never reaches a server, so the first request cannot carry
 * it. It holds no data: it takes the token from the fragment (then drops the
 * fragment from the address bar), fetches every other file with it in an
 * `Authorization` header and opens the WebSocket with it as a subprotocol.
 *
 * @module
 */
import xtermJs from "@xterm/xterm/lib/xterm.js" with { type: "text" };
import xtermCss from "@xterm/xterm/css/xterm.css" with { type: "text" };
import appJs from "./page/app.js" with { type: "text" };
import appCss from "./page/app.css" with { type: "text" };

/** A served file. */
export interface Asset {
  body: string;
  type: string;
}

/** Files behind the token, by path. */
export const ASSETS: Record<string, Asset> = {
  // The source map is not shipped: no reference to it.
  "/assets/xterm.js": {
    body: xtermJs.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n"),
    type: "text/javascript; charset=utf-8",
  },
  "/assets/xterm.css": { body: xtermCss, type: "text/css; charset=utf-8" },
  "/assets/app.js": { body: appJs, type: "text/javascript; charset=utf-8" },
  "/assets/app.css": { body: appCss, type: "text/css; charset=utf-8" },
};

const LOADER = `(async () => {
  const boot = document.getElementById("boot");
  const m = /(?:^#|&)token=([A-Za-z0-9_-]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem("paneflow-token", m[1]);
    history.replaceState(null, "", location.pathname);
  }
  const token = sessionStorage.getItem("paneflow-token");
  if (!token) {
    boot.textContent = "No token: open the URL that paneflow web printed (it ends in #token=...).";
    return;
  }
  const get = async (path) => {
    const r = await fetch(path, { headers: { authorization: "Bearer " + token }, cache: "no-store" });
    if (r.status === 401) throw new Error("The token was refused: open the URL that paneflow web printed when it last started.");
    if (!r.ok) throw new Error("Could not load " + path + ": HTTP " + r.status);
    return URL.createObjectURL(await r.blob());
  };
  const script = (src) => new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = src;
    s.onload = resolve;
    s.onerror = () => reject(new Error("Could not run " + src));
    document.head.append(s);
  });
  try {
    const [xjs, xcss, ajs, acss] = await Promise.all(
      ["/assets/xterm.js", "/assets/xterm.css", "/assets/app.js", "/assets/app.css"].map(get),
    );
    for (const href of [xcss, acss]) {
      const l = document.createElement("link");
      l.rel = "stylesheet";
      l.href = href;
      document.head.append(l);
    }
    globalThis.PANEFLOW_TOKEN = token;
    await script(xjs);
    await script(ajs);
  } catch (e) {
    boot.textContent = e.message;
  }
})();`;

/** The loader page and its Content-Security-Policy (the inline loader by hash; everything else from blobs or this origin). */
export async function loaderPage(): Promise<{ html: string; csp: string }> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(LOADER)));
  const hash = btoa(String.fromCharCode(...digest));
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>paneflow web</title></head>
<body style="background:#14161a;color:#8a919c;font:14px system-ui,sans-serif">
<noscript>paneflow web needs JavaScript.</noscript><div id="boot" style="padding:2em">Loading…</div>
<script>${LOADER}</script></body></html>
`;
  const csp = [
    "default-src 'none'",
    `script-src 'sha256-${hash}' blob:`,
    "style-src blob: 'unsafe-inline'",
    "connect-src 'self'",
    "font-src 'self'",
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return { html, csp };
}
