// paneflow web: the page. Plain browser JavaScript in ES modules (this one
// is the entry; src/web/assets.ts lists them all and its loader links
// them), loaded after xterm.js (globalThis.Terminal) with the token in
// globalThis.PANEFLOW_TOKEN. Every tile is an xterm.js terminal of the
// pane's own size that replays the host's screen (surface.screen frames),
// scaled to fit its place in the host's layout.
import { renderBanner, renderMode } from "./banner.js";
import { connect } from "./connection.js";
import { renderFleet } from "./fleet.js";

renderMode();
renderBanner();
renderFleet();
connect();
