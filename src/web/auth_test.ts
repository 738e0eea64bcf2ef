import assert from "node:assert/strict";
import { authorized, isLoopback, newToken, presentedToken, sameOrigin, sameToken } from "./auth.ts";

Deno.test("auth: tokens are fresh, long and subprotocol-safe", () => {
  const a = newToken();
  assert.match(a, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(a, newToken());
});

Deno.test("auth: the token comes from a Bearer header or the WebSocket subprotocol, nowhere else", () => {
  const t = newToken();
  assert.equal(presentedToken(new Headers({ authorization: `Bearer ${t}` })), t);
  assert.equal(presentedToken(new Headers({ "sec-websocket-protocol": `paneflow, paneflow-token.${t}` })), t);
  assert.equal(presentedToken(new Headers({ authorization: `Basic ${t}` })), null);
  assert.equal(presentedToken(new Headers({ cookie: `token=${t}` })), null);
  assert.ok(authorized(new Headers({ authorization: `Bearer ${t}` }), t));
  assert.ok(!authorized(new Headers({ authorization: `Bearer ${t}x` }), t));
  assert.ok(!authorized(new Headers({ authorization: "Bearer " }), t));
  assert.ok(!authorized(new Headers(), t));
  assert.ok(sameToken(t, t) && !sameToken(t, t.slice(1)) && !sameToken("ab", "ac"));
});

Deno.test("auth: a WebSocket's Origin must be the page's own", () => {
  const h = (o: Record<string, string>) => new Headers(o);
  assert.ok(sameOrigin(h({ host: "127.0.0.1:8080", origin: "http://127.0.0.1:8080" })));
  assert.ok(sameOrigin(h({ host: "localhost:9000", origin: "http://localhost:9000" })));
  assert.ok(sameOrigin(h({ host: "127.0.0.1:8080" })), "no Origin: not a browser, the token decides");
  assert.ok(!sameOrigin(h({ host: "127.0.0.1:8080", origin: "http://evil.example" })));
  assert.ok(!sameOrigin(h({ host: "127.0.0.1:8080", origin: "http://127.0.0.1:8081" })));
  assert.ok(!sameOrigin(h({ host: "127.0.0.1:8080", origin: "null" })));
  assert.ok(!sameOrigin(h({ origin: "http://127.0.0.1:8080" })));
});

Deno.test("auth: loopback addresses", () => {
  for (const a of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]) assert.ok(isLoopback(a), a);
  for (const a of ["0.0.0.0", "192.168.1.2", "::", "example.com"]) assert.ok(!isLoopback(a), a);
});
