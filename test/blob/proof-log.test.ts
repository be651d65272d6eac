import { createHash } from "node:crypto";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stampOf } from "../../src/blob/blob-file.ts";
import { BlobStore } from "../../src/blob/blob-store.ts";
import { PROOF_LOG_FILE } from "../../src/blob/proof-log.ts";
import { collectGarbage } from "../../src/maintenance/gc.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { runTs } from "../support/child.ts";
import { injectFault, opensForWriting } from "../support/fault.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const CHILD = join(import.meta.dirname, "helpers", "eager-open-child.ts");
const HOUR_AGO = () => new Date(Date.now() - 3600_000);

/** A blob stored and made old (past the racy window), then re-hashed by `verify`: its proof is logged. */
async function provenBlob(dir: string, bytes: Buffer): Promise<{ path: string; hash: string }> {
  const { path, hash } = new BlobStore(dir).putSync(bytes);
  utimesSync(path, HOUR_AGO(), HOUR_AGO());
  expect(await new BlobStore(dir).verify(hash)).toBe(true);
  return { path, hash };
}

/** The last line of a blob directory's proof log. */
function lastProof(dir: string): string | undefined {
  return readFileSync(join(dir, PROOF_LOG_FILE), "latin1").trimEnd().split("\n").at(-1);
}

/** Rewrites a file in place (same inode, same size) with other bytes and an mtime of its own. */
function rewriteInPlace(path: string, bytes: Buffer, mtime: Date): void {
  const ino = statSync(path).ino;
  writeFileSync(path, bytes);
  utimesSync(path, mtime, mtime);
  expect(statSync(path).ino).toBe(ino);
}

describe("the blob directory's proof log (.proven)", () => {
  it("records a verified blob's stamp, and a fresh store trusts it only while the stamp holds", async () => {
    const dir = tempDir();
    const bytes = Buffer.from("an image's bytes ".repeat(50));
    const { path, hash } = await provenBlob(dir, bytes);
    expect(lastProof(dir)).toBe(`${hash} ${stampOf(statSync(path))}`);
    // Bit rot under an unchanged stamp is not seen by a trusting read: that is what verify is for.
    const rotten = Buffer.from(bytes).fill(0x41, 5, 9);
    const { mtime } = statSync(path);
    rewriteInPlace(path, rotten, mtime);
    expect(new BlobStore(dir).getVerifiedSync(hash)!.equals(rotten)).toBe(true);
    expect(await new BlobStore(dir).verify(hash)).toBe(false);
    // verify revoked the proof: no later store trusts the file again.
    expect(lastProof(dir)).toBe(`${hash} -`);
    expect(() => new BlobStore(dir).getVerifiedSync(hash)).toThrow(expect.objectContaining({ code: "BLOB_CORRUPT", path }));
  });

  it("a blob rewritten in place (same size, new mtime) is BLOB_CORRUPT on an eager open in a fresh process", async () => {
    const root = tempDir();
    const png = makePng(32, 32, 5);
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendMessage({ role: "user", content: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }] });
    await m.close();
    const blobs = join(root, "blobs");
    const path = join(blobs, sha(png));
    utimesSync(path, HOUR_AGO(), HOUR_AGO());
    const first = await runTs(CHILD, [root, m.sessionFile!]);
    expect(first.stderr).toBe("");
    expect(JSON.parse(first.stdout)).toEqual({ codes: [], images: [png.toString("base64")] });
    expect(lastProof(blobs)).toBe(`${sha(png)} ${stampOf(statSync(path))}`);

    rewriteInPlace(path, Buffer.from(png).fill(0, 40, 60), new Date(Date.now() - 1800_000));
    const after = await runTs(CHILD, [root, m.sessionFile!]);
    expect(after.stderr).toBe("");
    expect(JSON.parse(after.stdout)).toEqual({ codes: ["BLOB_CORRUPT"], images: [`blob:sha256:${sha(png)}`] });
  });

  it("a readOnly open uses the log but writes none (readOnly writes nothing, anywhere)", async () => {
    const root = tempDir();
    const png = makePng(24, 24, 9);
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendMessage({ role: "user", content: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }] });
    await m.close();
    const blobs = join(root, "blobs");
    utimesSync(join(blobs, sha(png)), HOUR_AGO(), HOUR_AGO());
    const before = readdirSync(blobs).sort();
    const log = readFileSync(join(blobs, PROOF_LOG_FILE), "latin1"); // the put's proof, of a stamp since changed
    const opened = await SessionManager.open(m.sessionFile!, { root, readOnly: true, rehydrate: "eager" });
    expect(JSON.stringify(opened.getEntries())).toContain(png.toString("base64"));
    expect(readdirSync(blobs).sort()).toEqual(before);
    expect(readFileSync(join(blobs, PROOF_LOG_FILE), "latin1")).toBe(log); // re-hashed, not recorded
  });

  it("is neither a blob to list() nor garbage to gc (only 64-hex names are blobs)", async () => {
    const root = tempDir();
    const blobs = join(root, "blobs");
    mkdirSync(join(root, "sessions"), { recursive: true });
    const { hash } = await provenBlob(blobs, Buffer.from("unreferenced ".repeat(9)));
    const log = readFileSync(join(blobs, PROOF_LOG_FILE), "latin1");
    const listed: string[] = [];
    for await (const h of new BlobStore(blobs).list()) listed.push(h);
    expect(listed).toEqual([hash]);
    const report = await collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: blobs, graceMs: 0 });
    expect(report.deleted).toEqual([hash]);
    expect(readdirSync(blobs)).toEqual([PROOF_LOG_FILE]);
    expect(readFileSync(join(blobs, PROOF_LOG_FILE), "latin1")).toBe(log);
  });

  it("keeps the proof of a blob someone else just wrote in memory only (a same-tick rewrite would keep its stamp)", () => {
    const dir = tempDir();
    const store = new BlobStore(dir);
    const hash = sha(Buffer.from("fresh"));
    writeFileSync(join(dir, hash), "fresh");
    expect(store.getVerifiedSync(hash)!.toString()).toBe("fresh");
    expect(new BlobStore(dir).getSync(hash, { verify: true })!.toString()).toBe("fresh");
    expect(readdirSync(dir)).toEqual([hash]);
  });

  it("ignores garbage, foreign and torn lines, and a proof of another stamp", async () => {
    const dir = tempDir();
    const bytes = Buffer.from("good bytes ".repeat(20));
    const { path, hash } = await provenBlob(dir, bytes);
    const stamp = stampOf(statSync(path));
    const rotten = Buffer.from(bytes).fill(0x42, 0, 4);
    rewriteInPlace(path, rotten, statSync(path).mtime); // stamp unchanged: only the log decides
    const [ino, size, mtime] = stamp.split(":");
    for (const log of [
      '\u0000\u0000garbage\n{"json":1}\n',
      `${hash}  ${stamp}\n`,
      `${hash.toUpperCase()} ${stamp}\n`,
      `${hash} ${stamp}`, // torn: no newline
      `${hash} ${ino}:${size}:${Number(mtime) + 1}\n`,
      `${hash} ${stamp} extra\n`,
    ]) {
      writeFileSync(join(dir, PROOF_LOG_FILE), log);
      expect(() => new BlobStore(dir).getVerifiedSync(hash), log).toThrow(expect.objectContaining({ code: "BLOB_CORRUPT" }));
    }
  });

  it("never follows a symlink planted under the log's name, for reading or writing", async () => {
    const dir = tempDir();
    const elsewhere = join(tempDir(), "target");
    const bytes = Buffer.from("linked ".repeat(30));
    const { path, hash } = new BlobStore(dir).putSync(bytes);
    unlinkSync(join(dir, PROOF_LOG_FILE)); // the put's proof: the link is planted in its place
    utimesSync(path, HOUR_AGO(), HOUR_AGO());
    const rotten = Buffer.from(bytes).fill(0x43, 0, 4);
    rewriteInPlace(path, rotten, statSync(path).mtime);
    const planted = `${hash} ${stampOf(statSync(path))}\n`;
    writeFileSync(elsewhere, planted);
    symlinkSync(elsewhere, join(dir, PROOF_LOG_FILE));
    expect(() => new BlobStore(dir).getVerifiedSync(hash)).toThrow(expect.objectContaining({ code: "BLOB_CORRUPT" }));
    rewriteInPlace(path, bytes, HOUR_AGO());
    expect(new BlobStore(dir).getVerifiedSync(hash)!.equals(bytes)).toBe(true); // proven, but not recorded through the link
    expect(readFileSync(elsewhere, "latin1")).toBe(planted);
    expect(lstatSync(join(dir, PROOF_LOG_FILE)).isSymbolicLink()).toBe(true);
  });

  it("works in a blob directory it cannot write to (proofs stay in memory)", async () => {
    const dir = tempDir();
    const bytes = Buffer.from("read-only ".repeat(30));
    const { path, hash } = new BlobStore(dir).putSync(bytes);
    unlinkSync(join(dir, PROOF_LOG_FILE)); // a directory with no log, that none can be written to
    utimesSync(path, HOUR_AGO(), HOUR_AGO());
    // Root writes through chmod: the refusal a read-only directory gives is injected at the I/O seam instead.
    const asRoot = process.getuid?.() === 0;
    let restore: () => void = () => {};
    if (asRoot)
      restore = injectFault("openSync", (_, args) =>
        String(args[0]).includes(PROOF_LOG_FILE) && opensForWriting(args[1]) ? "EROFS" : undefined,
      );
    else chmodSync(dir, 0o500);
    try {
      const store = new BlobStore(dir);
      expect(store.getVerifiedSync(hash)!.equals(bytes)).toBe(true);
      expect(store.getVerifiedSync(hash)!.equals(bytes)).toBe(true);
      expect(await store.verify(hash)).toBe(true);
      expect(store.putSync(bytes)).toMatchObject({ existed: true, repaired: false });
      expect(readdirSync(dir)).toEqual([hash]);
    } finally {
      restore();
      chmodSync(dir, 0o700);
    }
  });

  it("takes a directory under the log's name for no log at all", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, PROOF_LOG_FILE), { recursive: true });
    const { hash } = await provenBlob(dir, Buffer.from("beside a directory ".repeat(9)));
    expect(new BlobStore(dir).getVerifiedSync(hash)!.toString()).toBe("beside a directory ".repeat(9));
    expect(readdirSync(join(dir, PROOF_LOG_FILE))).toEqual([]);
  });

  it("never grows without bound: many re-proofs of a few blobs are compacted to one line each", async () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    const hashes: string[] = [];
    for (let i = 0; i < 3; i++) hashes.push((await provenBlob(dir, Buffer.from(`blob ${i} `.repeat(10)))).hash);
    const store = new BlobStore(dir);
    const rounds = 5000; // more proofs than the compaction threshold (twice the live proofs + 4096)
    for (let round = 0; round < rounds; round++) {
      const hash = hashes[round % 3]!;
      const at = new Date(Date.now() - 3600_000 - round * 1000);
      utimesSync(join(dir, hash), at, at); // a new stamp: the next read re-hashes and proves it again
      expect(store.getVerifiedSync(hash)).not.toBeNull();
    }
    const lines = readFileSync(join(dir, PROOF_LOG_FILE), "latin1").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines.length).toBeLessThanOrEqual(2 * 3 + 4096);
    // The log still holds each blob's last proof: a fresh store trusts each current stamp (rot under it goes unseen).
    for (const hash of hashes) {
      const path = join(dir, hash);
      const rotten = Buffer.from(readFileSync(path)).fill(0x44, 0, 1);
      rewriteInPlace(path, rotten, statSync(path).mtime);
      expect(new BlobStore(dir).getVerifiedSync(hash)!.equals(rotten)).toBe(true);
    }
    expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });
});
