import { createHash } from "node:crypto";
import { lstatSync, openSync, readFileSync, statSync, truncateSync, writeFileSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stampOf } from "../../src/blob/blob-file.ts";
import { BlobStore } from "../../src/blob/blob-store.ts";
import { PROOF_LOG_FILE, RACY_MS } from "../../src/blob/proof-log.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { runTs } from "../support/child.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const CHILD = join(import.meta.dirname, "helpers", "eager-open-child.ts");

/** Bytes that differ at every offset's neighbourhood (a pattern a chunked reader cannot fake). */
function patterned(size: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed + (i >>> 8)) & 0xff;
  return out;
}

/** Overwrites bytes in place: same inode, same size, the kernel's mtime (no utimes). */
function scribble(path: string, at: number, bytes: Buffer): void {
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, bytes, 0, bytes.length, at);
  } finally {
    closeSync(fd);
  }
}

describe("a blob our store writes is proven from the first read of any later process", () => {
  it("logs the proof at once, under an mtime settled past the racy window", () => {
    const dir = tempDir();
    const before = Date.now();
    const { path, hash } = new BlobStore(dir).putSync(patterned(5000, 1));
    const stat = lstatSync(path);
    expect(stat.mtimeMs).toBeLessThanOrEqual(before - RACY_MS);
    expect(readFileSync(join(dir, PROOF_LOG_FILE), "latin1")).toBe(`${hash} ${stampOf(stat)}\n`);
  });

  it("refreshing an intact blob (GC grace) gives it the current time, proven in memory only", () => {
    const dir = tempDir();
    const bytes = patterned(3000, 2);
    new BlobStore(dir).putSync(bytes);
    const log = readFileSync(join(dir, PROOF_LOG_FILE), "latin1");
    const before = Date.now();
    const again = new BlobStore(dir).putSync(bytes);
    expect(again.existed).toBe(true);
    expect(lstatSync(again.path).mtimeMs).toBeGreaterThanOrEqual(before - 1000);
    // Proven by a compare a foreign write could have followed before the refresh: not logged.
    expect(readFileSync(join(dir, PROOF_LOG_FILE), "latin1")).toBe(log);
    expect(new BlobStore(dir).getVerifiedSync(again.hash)!.equals(bytes)).toBe(true);
  });

  it("a blob truncated after its proof is never served (fresh store, as a later process)", () => {
    const dir = tempDir();
    const { path, hash } = new BlobStore(dir).putSync(patterned(4000, 3));
    truncateSync(path, 3999);
    expect(() => new BlobStore(dir).getVerifiedSync(hash)).toThrow(expect.objectContaining({ code: "BLOB_CORRUPT" }));
    truncateSync(path, 0);
    expect(() => new BlobStore(dir).getVerifiedSync(hash)).toThrow(expect.objectContaining({ code: "BLOB_CORRUPT" }));
  });

  it("a blob overwritten in place right after its proof (same inode, same size) is never served", () => {
    const dir = tempDir();
    const bytes = patterned(4000, 4);
    const { path, hash } = new BlobStore(dir).putSync(bytes);
    const ino = statSync(path).ino;
    scribble(path, 100, Buffer.from("overwritten"));
    expect(statSync(path).ino).toBe(ino);
    expect(statSync(path).size).toBe(bytes.length);
    expect(() => new BlobStore(dir).getVerifiedSync(hash)).toThrow(expect.objectContaining({ code: "BLOB_CORRUPT" }));
  });

  it("an eager open in a fresh process serves the proven blob, and not once it is overwritten", async () => {
    const root = tempDir();
    const png = makePng(32, 32, 7);
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendMessage({ role: "user", content: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }] });
    await m.close();
    const path = join(root, "blobs", sha(png));
    expect(readFileSync(join(root, "blobs", PROOF_LOG_FILE), "latin1")).toBe(`${sha(png)} ${stampOf(lstatSync(path))}\n`);
    const first = await runTs(CHILD, [root, m.sessionFile!]);
    expect(first.stderr).toBe("");
    expect(JSON.parse(first.stdout)).toEqual({ codes: [], images: [png.toString("base64")] });
    scribble(path, 40, Buffer.alloc(20));
    const after = await runTs(CHILD, [root, m.sessionFile!]);
    expect(JSON.parse(after.stdout)).toEqual({ codes: ["BLOB_CORRUPT"], images: [`blob:sha256:${sha(png)}`] });
  });
});

describe("one-pass read + hash (getVerifiedSync, verify) equals read then hash", () => {
  const CHUNK = 256 * 1024;
  for (const size of [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7]) {
    it(`${size} bytes written by someone else: served exactly; a changed first or last byte is BLOB_CORRUPT`, async () => {
      const dir = tempDir();
      const bytes = patterned(size, size);
      const hash = sha(bytes);
      new BlobStore(dir); // the directory exists; the blob is a foreign copy with no proof
      writeFileSync(join(dir, hash), bytes);
      const got = new BlobStore(dir, { readOnly: true }).getVerifiedSync(hash);
      expect(got!.equals(bytes)).toBe(true);
      if (size === 0) return;
      for (const at of [0, size - 1]) {
        const wrong = Buffer.from(bytes);
        wrong[at] = wrong[at]! ^ 1;
        writeFileSync(join(dir, hash), wrong);
        expect(() => new BlobStore(dir, { readOnly: true }).getVerifiedSync(hash)).toThrow(
          expect.objectContaining({ code: "BLOB_CORRUPT" }),
        );
        expect(await new BlobStore(dir, { readOnly: true }).verify(hash)).toBe(false);
        writeFileSync(join(dir, hash), bytes);
        expect(await new BlobStore(dir, { readOnly: true }).verify(hash)).toBe(true);
      }
    });
  }
});
