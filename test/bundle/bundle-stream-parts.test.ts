import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BlobStore } from "../../src/blob/blob-store.ts";
import { redactPieces } from "../../src/bundle/bundle-redact.ts";
import { PostgresBackend } from "../../src/index.ts";
import { sharingRedactor } from "../../src/session/redact-for-sharing.ts";
import { resolveSessionManagerOptions } from "../../src/session/session-options.ts";
import { backendOf } from "../../src/storage/backends.ts";
import { bytesSource, readAllBytes, type SessionSnapshot } from "../../src/storage/session-snapshot.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";
import { makeSession, treeOf } from "./helpers/bundle-fixtures.ts";

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

async function* piecesOf(bytes: Buffer, size: number): AsyncIterable<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function collect(pieces: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of pieces) parts.push(p);
  return Buffer.concat(parts);
}

describe("BlobStore.putHashedFrom: a blob written from pieces", () => {
  it("stores bytes arriving in odd pieces under their hash", async () => {
    const dir = tempDir();
    const bytes = randomBytes(300_001);
    await new BlobStore(dir).putHashedFrom(sha(bytes), piecesOf(bytes, 7_777));
    expect(readFileSync(join(dir, sha(bytes))).equals(bytes)).toBe(true);
    expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("bytes that do not hash to the name are BLOB_CORRUPT: nothing stored, no temp file left", async () => {
    const dir = tempDir();
    const bytes = randomBytes(100_000);
    const other = Buffer.from(bytes);
    other[5_000] = other[5_000]! ^ 1;
    await expect(new BlobStore(dir).putHashedFrom(sha(bytes), piecesOf(other, 4_096))).rejects.toMatchObject({ code: "BLOB_CORRUPT" });
    expect(readdirSync(dir).filter((n) => !n.startsWith(".proven"))).toEqual([]);
  });
});

describe("redactPieces: an artifact redacted a window at a time", () => {
  const GH = "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";

  it("finds a secret cut by the input's pieces and ones near every window edge; every other byte stays", async () => {
    const filler = Buffer.from(`${"x".repeat(99)}\n`);
    const parts: Buffer[] = [];
    // ~2.5 MiB of lines, a secret line every ~300 KiB (some land across 1 MiB window edges), a non-UTF-8 byte run
    for (let i = 0; i < 26_000; i++) parts.push(i % 3_000 === 1_500 ? Buffer.from(`token=${GH}\n`) : filler);
    parts.push(Buffer.from([0xff, 0xfe, 0x00, 0x0a]));
    const source = Buffer.concat(parts);
    const counts = new Map<string, number>();
    const out = await collect(redactPieces(piecesOf(source, 65_537), sharingRedactor({ key: Buffer.alloc(32, 1) }), counts));
    const secrets = source.toString("latin1").split(GH).length - 1;
    expect(secrets).toBeGreaterThan(7);
    expect(counts.get("github-token")).toBe(secrets);
    expect(out.includes(GH)).toBe(false);
    const marker = /\[REDACTED:github-token:[0-9a-f]{8}\]/g;
    expect(out.toString("latin1").replace(marker, GH)).toBe(source.toString("latin1"));
  });
});

const backends: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

/** The session's snapshot with one blob giving other bytes than its hash names. */
async function withForgedBlob(): Promise<SessionSnapshot> {
  const root = tempDir();
  const { id } = await makeSession("/proj", { root });
  const options = resolveSessionManagerOptions({ root });
  const snapshot = await backendOf(options).exportSnapshot((await backendOf(options).locate(id, options))!, options);
  return {
    ...snapshot,
    blob: async (hash) => {
      const real = await snapshot.blob(hash);
      if (real === null) return null;
      const bytes = Buffer.from(await readAllBytes(real));
      bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x40;
      return bytesSource(bytes);
    },
  };
}

describe("an import whose blob source gives other bytes is BLOB_CORRUPT, nothing written", () => {
  it("file tree", async () => {
    const snapshot = await withForgedBlob();
    const root = tempDir();
    const options = resolveSessionManagerOptions({ root });
    await expect(backendOf(options).importSnapshot(snapshot, options)).rejects.toMatchObject({ code: "BLOB_CORRUPT" });
    expect(await backendOf(options).locate(snapshot.header.id, options)).toBeNull();
    const left = Object.keys(treeOf(root)).filter((k) => !k.endsWith(".proven") && !k.endsWith(".referrers.jsonl"));
    expect(left).toEqual([]);
  });

  // Skipped only where no PostgreSQL can start: one loud SKIPPED line, and under CI=true a failed run instead (support/pg-global-setup.ts).
  it.skipIf(!pgCluster())("PostgreSQL", async () => {
    const snapshot = await withForgedBlob();
    const backend = PostgresBackend.of(await freshDatabase());
    backends.push(backend);
    const options = resolveSessionManagerOptions({ store: backend });
    await expect(backend.importSnapshot(snapshot, options)).rejects.toMatchObject({ code: "BLOB_CORRUPT" });
    expect(await backend.locate(snapshot.header.id, options)).toBeNull();
  });
});

// Skipped only where no PostgreSQL can start: one loud SKIPPED line, and under CI=true a failed run instead (support/pg-global-setup.ts).
describe.skipIf(!pgCluster())("a PostgreSQL artifact read chunk by chunk", () => {
  it("a reader that stops after the first chunk ends the read (no connection held); a read after it gets every byte", async () => {
    const backend = PostgresBackend.of(await freshDatabase(), { artifactChunkBytes: 1024, maxConnections: 2 });
    backends.push(backend);
    const root = tempDir();
    const { id } = await makeSession("/proj", { root });
    const content = randomBytes(10_000);
    const source = resolveSessionManagerOptions({ root });
    const snapshot = await backendOf(source).exportSnapshot((await backendOf(source).locate(id, source))!, source);
    const big: SessionSnapshot = {
      ...snapshot,
      artifacts: async function* () {
        yield { name: "big.bin", ...bytesSource(content) };
      },
    };
    const options = resolveSessionManagerOptions({ store: backend });
    await backend.importSnapshot(big, options);
    const stored = await backend.exportSnapshot(id, options);
    for (let round = 0; round < 3; round++) {
      for await (const artifact of stored.artifacts()) {
        for await (const chunk of artifact.open()) {
          expect(chunk.length).toBe(1024);
          break;
        }
      }
    }
    const read = new Map<string, Buffer>();
    for await (const artifact of stored.artifacts()) read.set(artifact.name, await readAllBytes(artifact));
    expect(read.get("big.bin")!.equals(content)).toBe(true);
  });
});
