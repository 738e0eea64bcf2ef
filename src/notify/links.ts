/**
 * Reply links: a token names one pane, one action and (for approve/deny) the
 * dialog it answers, and when it expires; it is signed with HMAC-SHA256 under
 * a secret the host makes at start (so a link dies with its host), and is
 * spent on first use.
 *
 * @module
 */
import { REPLY_ACTIONS, type ReplyAction } from "../spec/notify.ts";

/** What a token carries. */
export interface LinkClaim {
  surface_id: number;
  action: ReplyAction;
  /** The dialog an approve/deny answers; null for the other actions. */
  dialog_id: string | null;
  /** Expiry, ms since the epoch. */
  expires: number;
  nonce: string;
}

const enc = new TextEncoder();

function b64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function unb64url(text: string): Uint8Array | null {
  try {
    const s = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(s, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** Why a token was refused. */
export class LinkRefused extends Error {}

/** Signs and checks reply tokens; remembers the spent ones until they expire. */
export class LinkSigner {
  #key: Promise<CryptoKey>;
  #spent = new Map<string, number>();

  constructor(secret: Uint8Array = crypto.getRandomValues(new Uint8Array(32))) {
    this.#key = crypto.subtle.importKey(
      "raw",
      secret as BufferSource,
      { name: "HMAC", hash: "SHA-256" },
      false,
      [
        "sign",
        "verify",
      ],
    );
  }

  /** A token for `claim` (nonce and expiry filled in). */
  async sign(claim: Omit<LinkClaim, "nonce" | "expires">, ttlMs: number, now = Date.now()): Promise<string> {
    const full: LinkClaim = {
      ...claim,
      expires: now + ttlMs,
      nonce: b64url(crypto.getRandomValues(new Uint8Array(9))),
    };
    const body = b64url(enc.encode(JSON.stringify(full)));
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await this.#key, enc.encode(body)));
    return `${body}.${b64url(mac)}`;
  }

  /** The token's claim if it is genuine, unexpired and unspent; throws {@link LinkRefused} otherwise. */
  async check(token: string, now = Date.now()): Promise<LinkClaim> {
    const [body, mac, extra] = token.split(".");
    const sig = mac === undefined ? null : unb64url(mac);
    if (extra !== undefined || !body || !sig) throw new LinkRefused("The reply link is malformed");
    const good = await crypto.subtle.verify("HMAC", await this.#key, sig as BufferSource, enc.encode(body));
    if (!good) throw new LinkRefused("The reply link's signature does not match this host");
    let claim: LinkClaim;
    try {
      claim = JSON.parse(new TextDecoder().decode(unb64url(body)!));
    } catch {
      throw new LinkRefused("The reply link is malformed");
    }
    if (!REPLY_ACTIONS.includes(claim.action) || !Number.isInteger(claim.surface_id)) {
      throw new LinkRefused("The reply link is malformed");
    }
    if (claim.expires <= now) throw new LinkRefused("The reply link has expired");
    if (this.#spent.has(claim.nonce)) throw new LinkRefused("The reply link was used already");
    return claim;
  }

  /** Marks a checked claim as used (once the action was tried). */
  spend(claim: LinkClaim, now = Date.now()): void {
    for (const [nonce, expires] of this.#spent) if (expires <= now) this.#spent.delete(nonce);
    this.#spent.set(claim.nonce, claim.expires);
  }
}
