// `rss-child.ts <op> <path> <root>`: runs one operation and prints {ms, maxRssMB} as JSON.
// ops: open-lazy (read-only lazy open), migrate (import into a store).
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { SessionManager } from "../../src/session/session-manager.ts";

const [op, path, root] = process.argv.slice(2) as [string, string, string];
const start = performance.now();
if (op === "open-lazy") {
  const m = await SessionManager.open(path, { root, readOnly: true, rehydrate: "lazy" });
  if (m.getEntries().length === 0) throw new Error("empty");
  await m.close();
} else if (op === "open-eager") {
  const m = await SessionManager.open(path, { root, readOnly: true });
  await m.close();
} else if (op === "migrate") {
  const r = await migrateFile(path, { sessionsDir: `${root}/sessions`, blobsDir: `${root}/blobs` });
  if (r.status !== "imported") throw new Error(`migrate: ${r.status} ${r.error?.message}`);
} else {
  throw new Error(`unknown op ${op}`);
}
const ms = performance.now() - start;
process.stdout.write(`${JSON.stringify({ ms, maxRssMB: process.resourceUsage().maxRSS / 1024 })}\n`);
