/**
 * Who may use `paneflow web`: whoever holds the token printed with the URL.
 * The token travels in the URL's fragment (never sent to the server, so never
 * in a log or a Referer), and from the page in an `Authorization: Bearer`
 * header (assets) or a WebSocket subprotocol `paneflow-token.<token>` (the
 * only header a browser lets a page set on a WebSocket). A WebSocket upgrade
 * must also come from the page's own origin: a page on another site that
 * somehow got the token still cannot connect from a victim's browser.
 *
 * @module
 */

/** The subprotocol the page asks for and the server answers with. */
export const WS_PROTOCOL = "paneflow";
/** The prefix of the subprotocol that carries the token. */
export const TOKEN_PROTOCOL_PREFIX = "paneflow-token.";

/** A fresh random token: 32 bytes, base64url (a valid subprotocol token). */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Compares in time that depends only on the lengths. */
export function sameToken(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** The token a request carries, from its Authorization header or its WebSocket subprotocols. */
export function presentedToken(headers: Headers): string | null {
  const auth = headers.get("authorization");
  if (auth?.startsWith("Bearer ")) return auth.slice("Bearer ".length).trim();
  const protocols = headers.get("sec-websocket-protocol");
  if (protocols) {
    for (const p of protocols.split(",")) {
      const v = p.trim();
      if (v.startsWith(TOKEN_PROTOCOL_PREFIX)) return v.slice(TOKEN_PROTOCOL_PREFIX.length);
    }
  }
  return null;
}

/** Whether the request carries `token`. */
export function authorized(headers: Headers, token: string): boolean {
  const got = presentedToken(headers);
  return got !== null && sameToken(got, token);
}

/**
 * Whether a WebSocket upgrade's Origin is the page's own: `http(s)://` plus
 * the Host the browser sent (so an SSH port forward on another local port
 * still works). A missing Origin (not a browser) is allowed: the token
 * decides then.
 */
export function sameOrigin(headers: Headers): boolean {
  const origin = headers.get("origin");
  if (origin === null) return true;
  const host = headers.get("host");
  if (!host) return false;
  return origin === `http://${host}` || origin === `https://${host}`;
}

/** Whether a hostname is loopback (127.0.0.0/8, ::1, localhost). */
export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}
