import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, truncateSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isBlobRef, parseBlobRef } from "../../src/blob/blob-ref.ts";
import { BlobStore } from "../../src/blob/blob-store.ts";
import { blobDirEntries } from "../support/blob-dir.ts";
import { injectFault } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

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
    expect(blobDirEntries(dir)).toEqual([put.hash]); // no temp file left behind
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
    for (const bad of [
      "blob:sha256:../../x",
      `blob:sha256:${"A".repeat(64)}`,
      `blob:sha256:${"a".repeat(63)}`,
      "../etc/passwd",
      "a".repeat(65),
      "",
    ]) {
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

  /** The ways a blob under its final name goes bad: a crash, a foreign in-place writer, bit rot. */
  const DAMAGE: Array<[string, (path: string, bytes: Buffer) => void]> = [
    ["zero-length", (path) => writeFileSync(path, "")],
    ["truncated", (path, bytes) => writeFileSync(path, bytes.subarray(0, bytes.length >> 1))],
    ["same length, wrong bytes", (path, bytes) => writeFileSync(path, Buffer.from(bytes.map((b) => b ^ 0x5a)))],
    ["one flipped byte", (path, bytes) => writeFileSync(path, Buffer.from(bytes).fill(bytes[7]! ^ 1, 7, 8))],
    [
      "a symlink to the right bytes elsewhere",
      (path, bytes) => {
        const elsewhere = join(tempDir(), "outside");
        writeFileSync(elsewhere, bytes);
        unlinkSync(path);
        symlinkSync(elsewhere, path);
      },
    ],
  ];
  const putPaths: Array<[string, (store: BlobStore, bytes: Buffer) => Promise<{ existed: boolean; repaired: boolean }>]> = [
    ["put", (store, bytes) => store.put(bytes)],
    ["putSync", async (store, bytes) => store.putSync(bytes)],
    ["putHashedSync", async (store, bytes) => store.putHashedSync(sha(bytes), bytes)],
  ];

  for (const [damage, corrupt] of DAMAGE) {
    for (const [how, put] of putPaths) {
      it(`${how} of the right bytes heals a blob left ${damage} under its name`, async () => {
        const dir = tempDir();
        const bytes = Buffer.from("the real image bytes, long enough to cut in half ".repeat(40));
        const path = new BlobStore(dir).putSync(bytes).path;
        corrupt(path, bytes);
        const result = await put(new BlobStore(dir), bytes);
        expect(result).toMatchObject({ existed: false, repaired: true });
        expect(statSync(path).isFile()).toBe(true);
        expect(readFileSync(path).equals(bytes)).toBe(true);
        expect(blobDirEntries(dir)).toEqual([sha(bytes)]); // healed by rename: no temp file left
        expect((await put(new BlobStore(dir), bytes)).existed).toBe(true);
      });
    }
  }

  it("a store that already proved a blob still heals it after it is damaged in place", () => {
    const dir = tempDir();
    const store = new BlobStore(dir);
    const bytes = Buffer.from("proven once, then overwritten in place ".repeat(10));
    const { path } = store.putSync(bytes);
    expect(store.putSync(bytes)).toMatchObject({ existed: true, repaired: false });
    expect(store.getVerifiedSync(sha(bytes))!.equals(bytes)).toBe(true);
    writeFileSync(path, Buffer.from(bytes).fill(0x41, 3, 9)); // same length, new mtime
    expect(() => store.getVerifiedSync(sha(bytes))).toThrow(expect.objectContaining({ code: "BLOB_CORRUPT", path }));
    expect(store.putSync(bytes)).toMatchObject({ existed: false, repaired: true });
    expect(readFileSync(path).equals(bytes)).toBe(true);
    truncateSync(path, 10);
    expect(store.putSync(bytes).repaired).toBe(true);
    expect(store.getVerifiedSync(sha(bytes))!.equals(bytes)).toBe(true);
  });

  for (const [damage, corrupt] of DAMAGE.slice(0, 4)) {
    it(`getVerifiedSync refuses a blob left ${damage} (BLOB_CORRUPT), never hands out its bytes`, () => {
      const dir = tempDir();
      const bytes = Buffer.from("image ".repeat(100));
      const store = new BlobStore(dir);
      const { path, hash } = store.putSync(bytes);
      corrupt(path, bytes);
      expect(() => new BlobStore(dir).getVerifiedSync(hash)).toThrow(expect.objectContaining({ code: "BLOB_CORRUPT", path }));
      expect(() => store.getVerifiedSync(hash)).toThrow(expect.objectContaining({ code: "BLOB_CORRUPT", path }));
      expect(new BlobStore(dir).getVerifiedSync("b".repeat(64))).toBeNull();
    });
  }

  it("has() is a presence check that does not trust an empty file, a symlink or a directory", async () => {
    const dir = tempDir();
    const store = new BlobStore(dir);
    const full = store.putSync(Buffer.from("content"));
    const empty = store.putSync(Buffer.alloc(0)); // the empty blob is legitimately empty
    expect(await store.has(full.hash)).toBe(true);
    expect(store.hasSync(empty.ref)).toBe(true);
    writeFileSync(full.path, "");
    expect(await store.has(full.hash)).toBe(false);
    expect(store.hasSync(full.hash)).toBe(false);
    unlinkSync(full.path);
    symlinkSync(empty.path, full.path);
    expect(store.hasSync(full.hash)).toBe(false);
    unlinkSync(full.path);
    mkdirSync(full.path);
    expect(store.hasSync(full.hash)).toBe(false);
    expect(store.hasSync("c".repeat(64))).toBe(false);
  });
});
