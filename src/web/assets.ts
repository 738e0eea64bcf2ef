/**
 * The page's files, embedded by import (so `deno compile` carries them and
 * nothing is read from disk at run time): xterm.js and its CSS from the
 * @xterm/xterm package, our own ES modules (./page/*.js) and CSS, and the
 * loader page.
 *
 * The loader at `/` is the only thing served without the token: a fragment
 * (`#token=...`) never reaches a server, so the first request cannot carry
 * it. It holds no data: it takes the token from the fragment (then drops the
 * fragment from the address bar), fetches every other file with it in an
 * `Authorization` header and opens the WebSocket with it as a subprotocol.
 *
 * A module's own `import` cannot send that header, so the loader links the
 * page's modules itself: it fetches each, turns it into a blob URL after its
 * imports (their `from "./x.js"` rewritten to the blob URLs of those
 * modules), and imports the entry, ./page/app.js. A new module is one file
 * in ./page/ and one line in {@link PAGE_MODULES}.
 *
 * @module
 */
import xtermJs from "@xterm/xterm/lib/xterm.js" with { type: "text" };
import xtermCss from "@xterm/xterm/css/xterm.css" with { type: "text" };
import appCss from "./page/app.css" with { type: "text" };
import appJs from "./page/app.js" with { type: "text" };
import bannerJs from "./page/banner.js" with { type: "text" };
import connectionJs from "./page/connection.js" with { type: "text" };
import domJs from "./page/dom.js" with { type: "text" };
import drawJs from "./page/draw.js" with { type: "text" };
import fitJs from "./page/fit.js" with { type: "text" };
import fleetJs from "./page/fleet.js" with { type: "text" };
import focusJs from "./page/focus.js" with { type: "text" };
import headsJs from "./page/heads.js" with { type: "text" };
import layoutJs from "./page/layout.js" with { type: "text" };
import stateJs from "./page/state.js" with { type: "text" };
import tilesJs from "./page/tiles.js" with { type: "text" };
import viewJs from "./page/view.js" with { type: "text" };

/** A served file. */
export interface Asset {
  body: string;
  type: string;
}

/** The page's ES modules by file name, each served at `/assets/page/<name>`; app.js is the entry. */
export const PAGE_MODULES: Record<string, string> = {
  "app.js": appJs,
  "banner.js": bannerJs,
  "connection.js": connectionJs,
  "dom.js": domJs,
  "draw.js": drawJs,
  "fit.js": fitJs,
  "fleet.js": fleetJs,
  "focus.js": focusJs,
  "heads.js": headsJs,
  "layout.js": layoutJs,
  "state.js": stateJs,
  "tiles.js": tilesJs,
  "view.js": viewJs,
};

const JS = "text/javascript; charset=utf-8";

/** Files behind the token, by path. */
export const ASSETS: Record<string, Asset> = {
  // The source map is not shipped: no reference to it.
  "/assets/xterm.js": { body: xtermJs.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n"), type: JS },
  "/assets/xterm.css": { body: xtermCss, type: "text/css; charset=utf-8" },
  "/assets/app.css": { body: appCss, type: "text/css; charset=utf-8" },
  ...Object.fromEntries(
    Object.entries(PAGE_MODULES).map(([name, body]) => [`/assets/page/${name}`, { body, type: JS }]),
  ),
};

const LOADER = `(async () => {
  const MODULES = ${JSON.stringify(Object.keys(PAGE_MODULES))};
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
  const load = async (path) => {
    const r = await fetch(path, { headers: { authorization: "Bearer " + token }, cache: "no-store" });
    if (r.status === 401) throw new Error("The token was refused: open the URL that paneflow web printed when it last started.");
    if (!r.ok) throw new Error("Could not load " + path + ": HTTP " + r.status);
    return r;
  };
  const get = async (path) => URL.createObjectURL(await (await load(path)).blob());
  // Each module becomes a blob URL once the modules it imports have theirs.
  const linkModules = async () => {
    const sources = Object.fromEntries(
      await Promise.all(MODULES.map(async (n) => [n, await (await load("/assets/page/" + n)).text()])),
    );
    const urls = {};
    const link = (name, from) => {
      if (urls[name] === null) throw new Error("The page's modules import each other in a circle at " + name);
      if (urls[name]) return urls[name];
      if (!(name in sources)) throw new Error("The page's module " + name + " (imported by " + from + ") is missing");
      urls[name] = null;
      const code = sources[name].replace(
        /(\\bfrom\\s*|\\bimport\\s*)"\\.\\/([\\w-]+\\.js)"/g,
        (_, head, dep) => head + JSON.stringify(link(dep, name)),
      );
      return urls[name] = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
    };
    return link("app.js", "the loader");
  };
  const script = (src) => new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = src;
    s.onload = resolve;
    s.onerror = () => reject(new Error("Could not run " + src));
    document.head.append(s);
  });
  try {
    const [xjs, xcss, acss, app] = await Promise.all([
      get("/assets/xterm.js"),
      get("/assets/xterm.css"),
      get("/assets/app.css"),
      linkModules(),
    ]);
    for (const href of [xcss, acss]) {
      const l = document.createElement("link");
      l.rel = "stylesheet";
      l.href = href;
      document.head.append(l);
    }
    globalThis.PANEFLOW_TOKEN = token;
    await script(xjs);
    await import(app);
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
