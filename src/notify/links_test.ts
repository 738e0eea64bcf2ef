import assert from "node:assert/strict";
import { LinkRefused, LinkSigner } from "./links.ts";

Deno.test("reply links: signed, scoped, single-use, expiring", async () => {
  const signer = new LinkSigner();
  const token = await signer.sign({ surface_id: 3, action: "approve", dialog_id: "0a1b2c3d" }, 60_000);
  const claim = await signer.check(token);
  assert.deepEqual([claim.surface_id, claim.action, claim.dialog_id], [3, "approve", "0a1b2c3d"]);
  signer.spend(claim);
  await assert.rejects(() => signer.check(token), LinkRefused, "used already");

  const other = new LinkSigner();
  const forged = await other.sign({ surface_id: 3, action: "approve", dialog_id: null }, 60_000);
  await assert.rejects(() => signer.check(forged), /signature does not match/);
  // A claim edited under the same signature.
  const [body, mac] = (await signer.sign({ surface_id: 3, action: "deny", dialog_id: null }, 60_000)).split(
    ".",
  );
  const edited = btoa(
    atob(body.replace(/-/g, "+").replace(/_/g, "/")).replace('"surface_id":3', '"surface_id":4'),
  )
    .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  await assert.rejects(() => signer.check(`${edited}.${mac}`), /signature does not match/);

  const old = await signer.sign(
    { surface_id: 3, action: "interrupt", dialog_id: null },
    1000,
    Date.now() - 5000,
  );
  await assert.rejects(() => signer.check(old), /has expired/);
  await assert.rejects(() => signer.check("nonsense"), /malformed/);
});
