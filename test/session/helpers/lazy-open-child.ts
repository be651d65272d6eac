// `lazy-open-child.ts <sessionPath> <root> <seed> <imageSize>`: opens an image-heavy legacy session
// lazily under a small heap, rebuilds a short branch's context with images, prints a JSON report.
import { SessionManager } from "../../../src/session/session-manager.ts";
import { imageBytes } from "../../support/legacy-images.ts";

const [path, root, seed, imageSize] = process.argv.slice(2) as [string, string, string, string];
const m = await SessionManager.open(path, { root, rehydrate: "lazy" });
const entries = m.getEntries();
const heapAfterOpen = process.memoryUsage().heapUsed;
m.branch(entries[3]!.id); // user 0, assistant 0, user 1, assistant 1
const context = m.buildContext({ rehydrate: true });
const images = context.messages.flatMap((msg) =>
  (Array.isArray(msg.content) ? msg.content : []).filter((b: { type: string }) => b.type === "image"),
);
const matches = images.map(
  (img: { data: string }, i: number) => img.data === imageBytes(Number(seed), i, Number(imageSize)).toString("base64"),
);
await m.close();
process.stdout.write(
  `${JSON.stringify({
    entries: entries.length,
    migratedFrom: m.loadReport.migratedFrom,
    images: images.length,
    matches,
    heapAfterOpen,
  })}\n`,
);
