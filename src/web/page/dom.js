// The page's skeleton and the helpers that build it. Importing this module
// replaces the loader's "Loading…" with the page's fixed parts, so every
// other module can look them up when it loads.

/** The first element matching `sel`. */
export const $ = (sel) => document.querySelector(sel);

/** A new element with a class and text. */
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Every terminal's colours and font. */
export const THEME = { background: "#000000", foreground: "#d7dae0" };
export const FONT = {
  fontFamily: "DejaVu Sans Mono, Menlo, Consolas, monospace",
  fontSize: 13,
  lineHeight: 1,
};

document.body.replaceChildren();
const app = el("div");
app.id = "app";
app.innerHTML = `
  <div id="top"><h1>paneflow</h1><span id="hoststate"></span><span id="mode"></span></div>
  <div id="banner"></div>
  <div id="fleet"></div>
  <div id="workspaces"></div>
  <div id="focus"><div class="head"><span class="id"></span><span class="name"></span><span class="cmd"></span>
    <span class="badge"></span><span class="ro"></span><button type="button">Close (Esc)</button></div>
    <div class="body"><div class="scaler"></div><div class="more">new output below — scroll down</div></div></div>`;
document.body.append(app);

/** The focused view's parts. */
export const focusEl = $("#focus");
export const focusBody = focusEl.querySelector(".body");
export const focusScaler = focusEl.querySelector(".scaler");
export const more = focusEl.querySelector(".more");
