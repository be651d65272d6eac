// `shared-blob-writer.ts <root> <index> <count>`: appends <count> entries, every other one with one
// of three images shared by all writers; prints the session path at the end.
import { join } from "node:path";
import { SessionManager } from "../../../src/session/session-manager.ts";
import { makePng } from "../../support/png.ts";

const [root, index, count] = process.argv.slice(2) as [string, string, string];
const images = [1, 2, 3].map((s) => makePng(48, 48, s).toString("base64"));
const m = await SessionManager.create(join(root, `writer-${index}`), { root });
for (let i = 0; i < Number(count); i++) {
  // shared images, plus fresh ones: a fresh blob is unreferenced between its put and its line
  const data = i % 3 === 2 ? makePng(16, 16, Number(index) * 1000 + i).toString("base64") : images[i % 3]!;
  const content = i % 2 ? [{ type: "image", data, mimeType: "image/png" }] : `text ${index}/${i}`;
  m.appendMessage({ role: "user", content });
  if (i % 5 === 0) await new Promise((r) => setTimeout(r, 2));
}
await m.close();
process.stdout.write(`${m.sessionFile}\n`);
