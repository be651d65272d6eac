import { createHash } from "node:crypto";
import { readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isBlobRef, parseBlobRef } from "../../src/blob/blob-ref.ts";
import { BlobStore } from "../../src/blob/blob-store.ts";
import { injectFault } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

describe("BlobStore", () => {
  it("names a blob by the sha256 of exactly its bytes and writes it 0600", async () => {
    const dir = join(tempDir(), "blobs");
    const store = new BlobStore(dir);
    const bytes = Buffer.from("hello blob");
    const put = await store.put(bytes);
    expect(put.hash).toBe(sha(bytes));
    expect(put.ref).toBe(`blob:sha256:${sha(bytes)}`);
    expect(put.path).toBe(join(dir, sha(bytes)));
    expect(put.existed).toBe(false);
    expect(statSync(put.path).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect((await store.get(put.ref))?.equals(bytes)).toBe(true);
    expect(store.getSync(put.hash)?.equals(bytes)).toBe(true);
    expect(readdirSync(dir)).toEqual([put.hash]); // no temp file left behind
  });

  it("is idempotent and refreshes the mtime of an existing blob", () => {
    const store = new BlobStore(tempDir());
    const first = store.putSync(Buffer.from("x"));
    const old = new Date(Date.now() - 3600_000);
    utimesSync(first.path, old, old);
    const second = store.putSync(Buffer.from("x"));
    expect(second).toEqual({ ...first, existed: true });
    expect(statSync(first.path).mtimeMs).toBeGreaterThan(old.getTime() + 1000);
  });

  it("returns null for an absent blob and lists only hashes", async () => {
    const dir = tempDir();
    const store = new BlobStore(dir);
    expect(await store.get("a".repeat(64))).toBeNull();
    const { hash } = store.putSync(Buffer.from("y"));
    writeFileSync(join(dir, `.${hash}.123.abc.tmp`), "partial");
    writeFileSync(join(dir, "README"), "not a blob");
    const listed: string[] = [];
    for await (const h of store.list()) listed.push(h);
    expect(listed).toEqual([hash]);
    expect(await store.has(hash)).toBe(true);
    expect(await store.delete(hash)).toBe(true);
    expect(await store.delete(hash)).toBe(false);
  });

  it("rejects refs that could address anything outside the directory", async () => {
    const store = new BlobStore(tempDir());
    for (const bad of ["blob:sha256:../../x", "blob:sha256:" + "A".repeat(64), "blob:sha256:" + "a".repeat(63), "../etc/passwd", "a".repeat(65), ""]) {
      expect(isBlobRef(bad)).toBe(false);
      expect(() => parseBlobRef(bad)).toThrow(expect.objectContaining({ code: "INVALID_BLOB_REF" }));
      await expect(store.get(bad)).rejects.toMatchObject({ code: "INVALID_BLOB_REF" });
    }
  });

  it("catches a corrupted blob with verify() and get(…, {verify:true})", async () => {
    const store = new BlobStore(tempDir());
    const { hash, path } = store.putSync(Buffer.from("original"));
    expect(await store.verify(hash)).toBe(true);
    writeFileSync(path, "tampered");
    expect(await store.verify(hash)).toBe(false);
    await expect(store.get(hash, { verify: true })).rejects.toMatchObject({ code: "BLOB_CORRUPT", path });
    expect(() => store.getSync(hash, { verify: true })).toThrow(expect.objectContaining({ code: "BLOB_CORRUPT" }));
  });

  it("leaves no temp file and no blob when a write fails (ENOSPC)", () => {
    const dir = tempDir();
    const store = new BlobStore(dir);
    const restore = injectFault("writeSync", () => "ENOSPC");
    try {
      expect(() => store.putSync(Buffer.from("z"))).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
    } finally {
      restore();
    }
    expect(readdirSync(dir)).toEqual([]);
    expect(store.putSync(Buffer.from("z")).existed).toBe(false);
  });
});
