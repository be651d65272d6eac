// Child process for the keyed-blob crash test: `encrypted-image-writer-child.ts <sessionPath> <root> <key hex> <round>`:
// opens the encrypted session for writing and appends image entries forever (each a new image, so each append
// stores a keyed blob before its line), printing each acknowledged id.
import { SessionManager } from "../../../src/session/session-manager.ts";
import { makePng } from "../../support/png.ts";

const [path, root, keyHex, round] = process.argv.slice(2) as [string, string, string, string];
const m = await SessionManager.open(path, { root, lockStaleMs: 2000, encryption: { key: Buffer.from(keyHex, "hex") } });
process.stdout.write(`ready ${m.getEntries().length}\n`);
for (let i = 0; ; i++) {
  const data = makePng(24 + (i % 40), 24, Number(round) * 100_000 + i).toString("base64");
  const id = m.appendMessage({ role: "user", content: [{ type: "image", data, mimeType: "image/png" }] });
  process.stdout.write(`${id}\n`);
  if (i % 8 === 7) await new Promise((r) => setImmediate(r));
}
