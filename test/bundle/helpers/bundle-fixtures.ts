import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { SessionManager } from "../../../src/session/session-manager.ts";
import type { SessionManagerOptions } from "../../../src/session/session-options.ts";
import { makePng } from "../../support/png.ts";

/** A session with text, two images (one twice: one blob), a tool result and two artifact files; returns its id. */
export async function makeSession(
  cwd: string,
  options: SessionManagerOptions,
  seed = 1,
): Promise<{ id: string; path: string; images: Buffer[] }> {
  const m = await SessionManager.create(cwd, options);
  const images = [makePng(40, 40, seed), makePng(30, 30, seed + 100)];
  m.appendMessage({ role: "user", content: `hello ${seed} — ünïcode ✓` });
  m.appendMessage({
    role: "user",
    content: [
      { type: "text", text: "look" },
      { type: "image", data: images[0]!.toString("base64"), mimeType: "image/png" },
      { type: "image", data: images[1]!.toString("base64"), mimeType: "image/png" },
    ],
  });
  m.appendMessage({ role: "user", content: [{ type: "image", data: images[0]!.toString("base64"), mimeType: "image/png" }] });
  const artifacts = m.artifacts;
  if (artifacts !== null) {
    artifacts.save(`the notes of ${seed}\n`, { toolType: "notes", name: "notes" });
    artifacts.save(Buffer.from([0, 1, 2, 255, 254]).toString("latin1"), { toolType: "bash" });
  }
  await m.flush();
  const id = m.header.id;
  const path = m.storage.location!;
  await m.close();
  return { id, path, images };
}

/** Every regular file under `dir` (relative path → sha256), for before/after comparisons. */
export function treeOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      const st = statSync(path);
      if (st.isDirectory()) walk(path);
      else out[relative(dir, path)] = createHash("sha256").update(readFileSync(path)).digest("hex");
    }
  };
  walk(dir);
  return out;
}

/** Collects a byte stream. */
export async function bytesOf(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}
