/**
 * Reply links (`/r/<token>`, docs/notify.md): a GET shows what the link does
 * and a button (link previews and scanners fetch GETs, so a GET never acts);
 * a POST (the button, an ntfy action, a Slack button's follow-up) hands the
 * token to the host (`notify.reply`), which checks it and acts. The token is
 * the link's only credential: no web token is asked for.
 *
 * @module
 */
import { sameOrigin } from "./auth.ts";
import { callOnce } from "./host_link.ts";
import { SECURITY_HEADERS, text } from "./messages.ts";
import { RpcError } from "../errors.ts";

const TOKEN = /^\/r\/([A-Za-z0-9_.-]{1,1024})$/;
/** The largest POST body a reply takes (a one-line answer). */
const MAX_BODY = 8192;

/** Whether `pathname` is a reply link. */
export function isReplyPath(pathname: string): boolean {
  return TOKEN.test(pathname);
}

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function page(status: number, body: string): Response {
  return new Response(
    `<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
      `<title>paneflow reply</title><body style="font-family:sans-serif;max-width:30em;margin:2em auto">${body}`,
    {
      status,
      headers: {
        ...SECURITY_HEADERS,
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
      },
    },
  );
}

/** The action a token names, read without checking it (the host checks): for the page's wording. */
function actionOf(token: string): string {
  try {
    const body = token.split(".")[0].replace(/-/g, "+").replace(/_/g, "/");
    const claim = JSON.parse(atob(body));
    return typeof claim.action === "string" ? claim.action : "reply";
  } catch {
    return "reply";
  }
}

/** Serves one reply-link request. */
export async function serveReply(
  req: Request,
  opts: { socket: string; peer: string },
): Promise<Response> {
  const token = TOKEN.exec(new URL(req.url).pathname)![1];
  const action = actionOf(token);
  const wantsJson = (req.headers.get("accept") ?? "").includes("application/json");
  if (req.method === "GET" || req.method === "HEAD") {
    const field = action === "answer"
      ? `<p><input name="text" required maxlength="4096" autofocus style="width:100%" placeholder="One line"></p>`
      : "";
    return page(
      200,
      `<h1>paneflow: ${esc(action)}</h1><form method="post">${field}<button>${esc(action)}</button></form>`,
    );
  }
  if (req.method !== "POST") return text(405, "Method not allowed\n", { allow: "GET, POST" });
  if (req.headers.get("origin") !== null && !sameOrigin(req.headers)) {
    return text(403, "Forbidden: a reply from a foreign origin\n");
  }
  const raw = new Uint8Array(await req.arrayBuffer());
  if (raw.length > MAX_BODY) return text(413, "Too large\n");
  const bodyText = new TextDecoder().decode(raw);
  let answer: string | undefined;
  if ((req.headers.get("content-type") ?? "").includes("application/json")) {
    try {
      const j = JSON.parse(bodyText);
      if (typeof j?.text === "string") answer = j.text;
    } catch {
      return text(400, "Bad JSON\n");
    }
  } else {
    answer = new URLSearchParams(bodyText).get("text") ?? undefined;
  }
  const forwarded = req.headers.get("x-forwarded-for")?.split(",")[0]?.trim();
  const origin = (forwarded ? `${forwarded} via ${opts.peer}` : opts.peer).slice(0, 256);
  try {
    const r = await callOnce(opts.socket, "notify.reply", {
      token,
      origin,
      ...(answer !== undefined ? { text: answer } : {}),
    });
    if (wantsJson) return Response.json(r, { headers: SECURITY_HEADERS });
    return page(200, `<h1>Done</h1><p>${esc(`${r.action} on pane ${r.surface_id}: ${r.detail}`)}</p>`);
  } catch (e) {
    const message = (e as Error).message;
    const reason = e instanceof RpcError ? (e.data as { reason?: string } | undefined)?.reason : undefined;
    const status = reason === "link_refused" ? 403 : e instanceof RpcError ? 409 : 502;
    if (wantsJson) return Response.json({ error: message }, { status, headers: SECURITY_HEADERS });
    return page(status, `<h1>Refused</h1><p>${esc(message)}</p>`);
  }
}

/** Tells the host where reply links in notifications point (src/notify/): --public-url, else here. */
export async function announce(
  opts: { socket: string; publicUrl?: string; log: (line: string) => void },
  url: string,
): Promise<void> {
  const params = { public_url: opts.publicUrl ?? url, explicit: opts.publicUrl !== undefined };
  try {
    await callOnce(opts.socket, "notify.web", params);
  } catch (e) {
    opts.log(`paneflow web: reply links stay off: ${(e as Error).message}`);
  }
}
