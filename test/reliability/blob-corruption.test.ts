import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { BlobStore } from "../../src/blob/blob-store.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { blobDirEntries } from "../support/blob-dir.ts";
import { cli } from "../support/cli.ts";
import { withWriteFault } from "../support/fault-steps.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

/** Blob corruption as the fault suite knows it: what a crash, a foreign in-place writer or the disk leaves. */
const CORRUPTIONS: Array<[string, (bytes: Buffer) => Buffer]> = [
  ["zero-length", () => Buffer.alloc(0)],
  ["truncated", (bytes) => bytes.subarray(0, bytes.length - 100)],
  ["wrong bytes of the same length", (bytes) => Buffer.from(bytes.map((b, i) => (i % 97 === 0 ? b ^ 0xff : b)))],
];

const png = makePng(48, 48, 21);
const b64 = png.toString("base64");
const ref = `blob:sha256:${sha(png)}`;
const message = () => ({
  role: "user",
  content: [
    { type: "text", text: "see" },
    { type: "image", data: b64, mimeType: "image/png" },
  ],
});
const imageOf = (entry: unknown) => (entry as { message: { content: Array<{ data?: string }> } }).message.content[1]!.data;

async function sessionWithDamagedBlob(damage: (bytes: Buffer) => Buffer) {
  const root = tempDir();
  const m = await SessionManager.create(join(root, "p"), { root });
  const id = m.appendMessage(message());
  await m.close();
  const blob = join(root, "blobs", sha(png));
  writeFileSync(blob, damage(png));
  return { root, path: m.sessionFile!, id, blob, sessionId: m.sessionId };
}

describe("blob corruption under its final name", () => {
  for (const [kind, damage] of CORRUPTIONS) {
    it(`${kind}: an eager open warns BLOB_CORRUPT and keeps the ref, never an empty or wrong image`, async () => {
      const { root, path, id } = await sessionWithDamagedBlob(damage);
      const warnings: StoreWarning[] = [];
      const m = await SessionManager.open(path, { root, readOnly: true, onWarning: (w) => warnings.push(w) });
      expect(imageOf(m.getEntry(id))).toBe(ref);
      expect(warnings.map((w) => w.code)).toEqual(["BLOB_CORRUPT"]);
      expect(warnings[0]!.path).toBe(join(root, "blobs", sha(png)));
    });

    it(`${kind}: lazy rehydration (entry and context) warns BLOB_CORRUPT and keeps the ref`, async () => {
      const { root, path, id } = await sessionWithDamagedBlob(damage);
      const warnings: StoreWarning[] = [];
      const m = await SessionManager.open(path, { root, readOnly: true, rehydrate: "lazy", onWarning: (w) => warnings.push(w) });
      expect(imageOf(m.rehydrate(m.getEntry(id)))).toBe(ref);
      expect(m.buildContext({ rehydrate: true }).messages[0]).toEqual({
        ...message(),
        content: [message().content[0], { ...message().content[1], data: ref }],
      });
      expect(warnings.map((w) => w.code)).toEqual(["BLOB_CORRUPT", "BLOB_CORRUPT"]);
    });

    it(`${kind}: appending the same image again heals the blob, and the session opens whole`, async () => {
      const { root, path, id, blob } = await sessionWithDamagedBlob(damage);
      const writer = await SessionManager.open(path, { root, rehydrate: "lazy" });
      const second = writer.appendMessage(message());
      await writer.close();
      expect(readFileSync(blob).equals(png)).toBe(true);
      const warnings: StoreWarning[] = [];
      const m = await SessionManager.open(path, { root, readOnly: true, onWarning: (w) => warnings.push(w) });
      expect(imageOf(m.getEntry(id))).toBe(b64);
      expect(imageOf(m.getEntry(second))).toBe(b64);
      expect(warnings).toEqual([]);
    });

    it(`${kind}: a new session writing the same image heals it for the old one`, async () => {
      const { root, path, id, blob } = await sessionWithDamagedBlob(damage);
      const other = await SessionManager.create(join(root, "q"), { root });
      other.appendMessage(message());
      await other.close();
      expect(readFileSync(blob).equals(png)).toBe(true);
      expect(imageOf((await SessionManager.open(path, { root, readOnly: true })).getEntry(id))).toBe(b64);
    });

    it(`${kind}: migrating a legacy file that holds the image inline heals the blob`, async () => {
      const { root, blob } = await sessionWithDamagedBlob(damage);
      const legacy = join(root, "legacy.jsonl");
      const header = {
        type: "session",
        version: 3,
        id: "0197a000-0000-7000-8000-0000000000aa",
        timestamp: "2025-06-01T09:00:00.000Z",
        cwd: "/x",
      };
      const entry = { type: "message", id: "1a2b3c4d", parentId: null, timestamp: "2025-06-01T09:00:01.000Z", message: message() };
      writeFileSync(legacy, `${JSON.stringify(header)}\n${JSON.stringify(entry)}\n`);
      const report = await migrateFile(legacy, { sessionsDir: join(root, "sessions"), blobsDir: join(root, "blobs"), inPlace: true });
      expect(report).toMatchObject({ status: "migrated", blobsRepaired: 1, blobsNew: 0 });
      expect(readFileSync(blob).equals(png)).toBe(true);
    });

    it(`${kind}: export does not pass the damaged bytes off as the image and exits 1; verify reports it`, async () => {
      const { root, sessionId } = await sessionWithDamagedBlob(damage);
      const run = await cli(["export", sessionId, "--root", root]);
      expect(run.code).toBe(1);
      const lines = run.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(imageOf(lines[1])).toBe(ref);
      expect(run.stderr).toContain("could not be inlined");
      const verify = await cli(["verify", "--root", root, "--json"]);
      expect(verify.code).toBe(1);
      expect(verify.records.some((r) => r.kind === "BLOB_CORRUPT")).toBe(true);
    });
  }

  it("healing under ENOSPC/EIO at every write step: the damaged copy stays or the right one lands, never a partial one", async () => {
    const [, damage] = CORRUPTIONS[1]!;
    const { steps } = await withWriteFault(null, "EIO", () => {
      const dir = tempDir();
      writeFileSync(join(dir, sha(png)), damage(png));
      return new BlobStore(dir, { fsync: true }).putSync(png);
    });
    expect(steps).toBeGreaterThan(2);
    for (const code of ["ENOSPC", "EIO"]) {
      for (let k = 0; k < steps; k++) {
        const dir = tempDir();
        const path = join(dir, sha(png));
        writeFileSync(path, damage(png));
        const outcome = await withWriteFault(k, code, () => new BlobStore(dir, { fsync: true }).putSync(png));
        const now = readFileSync(path);
        if (outcome.error !== undefined) {
          expect(outcome.error, `${code} at step ${k}`).toMatchObject({ code: "PERSISTENCE_FAILED" });
          expect(now.equals(damage(png)) || now.equals(png), `${code} at step ${k}`).toBe(true);
        } else {
          expect(now.equals(png)).toBe(true);
        }
        expect(blobDirEntries(dir)).toEqual([sha(png)]); // no temp file left (the proof log is a cache)
        new BlobStore(dir).putSync(png); // the retry heals whatever the fault left
        expect(readFileSync(path).equals(png)).toBe(true);
      }
    }
  });
});
