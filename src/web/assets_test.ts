import assert from "node:assert/strict";
import { ASSETS, loaderPage, PAGE_MODULES } from "./assets.ts";

const PAGE = new URL("./page/", import.meta.url);

Deno.test("assets: every page module is embedded and served, and every import names one", () => {
  const files = [...Deno.readDirSync(PAGE)].map((e) => e.name).filter((n) => n.endsWith(".js")).sort();
  assert.deepEqual(Object.keys(PAGE_MODULES).sort(), files, "PAGE_MODULES lists every file in src/web/page/");
  for (const name of files) {
    assert.equal(
      PAGE_MODULES[name],
      Deno.readTextFileSync(new URL(name, PAGE)),
      `${name} is embedded as it is`,
    );
    assert.equal(ASSETS[`/assets/page/${name}`]?.body, PAGE_MODULES[name], `${name} is served`);
    // The loader rewrites `from "./x.js"` only: every relative import must be of that form.
    for (const m of PAGE_MODULES[name].matchAll(/^import\b[^;]*?;/gms)) {
      const dep = /from "\.\/([\w-]+\.js)";$/.exec(m[0]);
      assert.ok(dep, `${name}: ${m[0]} imports a page module as from "./x.js"`);
      assert.ok(dep[1] in PAGE_MODULES, `${name} imports ${dep[1]}, which is not a page module`);
    }
  }
});

Deno.test("assets: the loader page's script is allowed by its CSP hash and names every module", async () => {
  const { html, csp } = await loaderPage();
  const script = /<script>([\s\S]*)<\/script>/.exec(html)![1];
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(script)));
  assert.ok(csp.includes(`'sha256-${btoa(String.fromCharCode(...digest))}'`));
  assert.ok(script.includes(JSON.stringify(Object.keys(PAGE_MODULES))));
  new Function(script); // it parses
});
