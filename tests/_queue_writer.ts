/**
 * A queue writer for the tests: appends `count` messages from `from`,
 * alternating over the recipients, through the store's locked atomic append.
 * Usage: deno run -A tests/_queue_writer.ts <root> <from> <to1,to2,...> <count> <content-template>
 * The template's {from}, {n} and {to} are replaced.
 */
import { appendMessage, ensureRoot, newId } from "../src/paneio/store.ts";

const [root, from, tos, count, template] = Deno.args;
await ensureRoot(root);
const recipients = tos.split(",");
for (let n = 0; n < Number(count); n++) {
  const to = recipients[n % recipients.length];
  await appendMessage(root, {
    id: newId(),
    from,
    to,
    type: "task",
    status: "pending",
    content: template.replaceAll("{from}", from).replaceAll("{n}", String(n)).replaceAll("{to}", to),
    timestamp: new Date().toISOString(),
    metadata: { seq: n },
  });
}
