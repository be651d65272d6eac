// Child process for crash and lock tests: `writer-child.ts <mode> <sessionPath> <root> [seed]`.
//   append  — open the session for writing and append forever, printing each acknowledged id.
//   try-open — try to open for writing once and print "ok" or the error code.
import { SessionManager } from "../../../src/session/session-manager.ts";
import { makePng } from "../../support/png.ts";

const [mode, path, root, seedArg] = process.argv.slice(2) as [string, string, string, string | undefined];

if (mode === "try-open") {
  try {
    const m = await SessionManager.open(path, { root });
    process.stdout.write("ok\n");
    await m.close();
  } catch (err) {
    process.stdout.write(`${(err as { code?: string }).code ?? String(err)}\n`);
  }
  process.exit(0);
}

const seed = Number(seedArg ?? 1);
const images = [0, 1, 2].map((i) => makePng(24 + i * 8, 24, seed * 10 + i).toString("base64"));
const m = await SessionManager.open(path, { root, lockStaleMs: 2000 });
process.stdout.write(`ready ${m.getEntries().length}\n`);
for (let i = 0; ; i++) {
  const content =
    i % 4 === 3
      ? [
          { type: "text", text: `img ${i}` },
          { type: "image", data: images[i % 3]!, mimeType: "image/png" },
        ]
      : `entry ${seed}-${i} ${"pad ".repeat(i % 50)}`;
  const id = m.appendMessage({ role: i % 2 ? "assistant" : "user", content });
  process.stdout.write(`${id}\n`);
  if (i % 16 === 15) await new Promise((r) => setImmediate(r));
}
