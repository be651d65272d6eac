// Shared pieces of the seeded differential tests (a fast path against the path it replaces).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "../../src/session/session-manager.ts";
import { makePng } from "./png.ts";

/** A seeded source of numbers in [0, 1) (`prng` of fixtures/seeded.ts). */
export type Random = () => number;

export const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** An integer in [lo, hi]. */
export const int = (random: Random, lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));

/** Stores one small PNG in `root`'s blob store (through a session's append) and returns its blob ref. */
export async function storeOneImage(root: string): Promise<string> {
  const m = await SessionManager.create(join(root, "seed"), { root });
  m.appendMessage({ role: "user", content: [{ type: "image", data: makePng(30, 30, 5).toString("base64"), mimeType: "image/png" }] });
  const path = m.sessionFile!;
  await m.close();
  return /blob:sha256:[0-9a-f]{64}/.exec(readFileSync(path, "utf8"))![0];
}
