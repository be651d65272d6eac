import { copyFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { BlobStore } from "../../src/blob/blob-store.ts";
import { TranscriptStoreError } from "../../src/errors.ts";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { withWriteFault } from "../support/fault-steps.ts";
import { writeImageHeavyLegacySession } from "../support/legacy-images.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

const CODES = ["ENOSPC", "EIO"];
const image = () => ({
  role: "user",
  content: [
    { type: "text", text: "pic" },
    { type: "image", data: makePng(30, 30, 77).toString("base64"), mimeType: "image/png" },
  ],
});

function expectCoded(err: unknown): void {
  expect(err, String(err)).toBeInstanceOf(TranscriptStoreError);
  expect(["PERSISTENCE_FAILED", "MOVE_FAILED"]).toContain((err as TranscriptStoreError).code);
}

/** The seam function an injected fault failed in, found along the error's causes. */
function failedSyscall(err: unknown): string | undefined {
  for (let e = err as { syscall?: unknown; cause?: unknown } | undefined; e !== undefined && e !== null; e = e.cause as typeof e) {
    if (typeof e.syscall === "string") return e.syscall;
  }
  return undefined;
}

/**
 * True when `now` is either `original` or, when only the directory fsync after the commit's rename
 * failed (the rename is done; its durability is what is reported missing), the committed bytes.
 */
function originalOrCommitted(now: Buffer, original: Buffer, committed: Buffer, err: unknown): boolean {
  return now.equals(original) || (failedSyscall(err) === "fsyncSync" && now.equals(committed));
}

/** A migrate report's error (code and message only) as an error naming the seam function that failed. */
function reported(error: { message: string } | undefined): { syscall?: string } {
  return { syscall: /injected at (\w+)/.exec(error?.message ?? "")?.[1] };
}

/** No blob file under its final name holds bytes that do not hash to that name. */
async function blobsIntact(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  const store = new BlobStore(dir);
  for await (const hash of store.list()) expect(await store.verify(hash)).toBe(true);
}

describe("disk faults at every write step", () => {
  for (const [name, message] of [
    ["append text", () => ({ role: "user", content: "plain" })],
    ["append with image", image],
  ] as const) {
    it(`${name}: each step failing with ENOSPC/EIO leaves state intact, and a retry succeeds`, async () => {
      const probeRoot = tempDir();
      const probe = await SessionManager.create(probeRoot, { root: probeRoot, fsync: true });
      const { steps } = await withWriteFault(null, "EIO", () => probe.appendMessage(message()));
      await probe.close();
      expect(steps).toBeGreaterThan(0);
      let faults = 0;
      for (const code of CODES) {
        for (let k = 0; k < steps; k++) {
          const root = tempDir();
          const m = await SessionManager.create(root, { root, fsync: true });
          m.appendMessage({ role: "user", content: "before" });
          const bytes = readFileSync(m.sessionFile!);
          const outcome = await withWriteFault(k, code, () => m.appendMessage(message()));
          if (outcome.error !== undefined) {
            faults++;
            expectCoded(outcome.error);
            expect(readFileSync(m.sessionFile!).equals(bytes), `${code} at step ${k}`).toBe(true);
            expect(m.getEntries()).toHaveLength(1);
          }
          await blobsIntact(join(root, "blobs"));
          const id = m.appendMessage(message());
          await m.close();
          const again = await SessionManager.open(m.sessionFile!, { root, readOnly: true });
          expect(again.loadReport.malformed).toEqual([]);
          expect(again.getEntries().at(-1)!.id).toBe(id);
        }
      }
      expect(faults).toBeGreaterThan(0);
    });
  }

  it("rewrite (legacy migration on open): every failing step leaves the file byte-identical", async () => {
    const dir = tempDir();
    const legacy = join(dir, "legacy.jsonl");
    writeImageHeavyLegacySession(legacy, { seed: 3, count: 3, imageSize: 20_000 });
    const probeCopy = join(dir, "count.jsonl");
    copyFileSync(legacy, probeCopy);
    const counted = await withWriteFault(null, "EIO", async () =>
      (await SessionManager.open(probeCopy, { root: tempDir(), fsync: true })).close(),
    );
    expect(counted.steps).toBeGreaterThan(5);
    const rewritten = readFileSync(probeCopy);
    for (const code of CODES) {
      for (let k = 0; k < counted.steps; k++) {
        const root = tempDir();
        const path = join(root, "s.jsonl");
        copyFileSync(legacy, path);
        const outcome = await withWriteFault(k, code, async () => (await SessionManager.open(path, { root, fsync: true })).close());
        if (outcome.error !== undefined) {
          expectCoded(outcome.error);
          expect(originalOrCommitted(readFileSync(path), readFileSync(legacy), rewritten, outcome.error), `${code} at step ${k}`).toBe(
            true,
          );
          expect(readdirSync(root).filter((n) => n.endsWith(".tmp"))).toEqual([]);
        }
        await blobsIntact(join(root, "blobs"));
        const m = await SessionManager.open(path, { root });
        expect(m.header.version).toBe(3);
        await m.close();
      }
    }
  });

  it("blob put: a failing step never leaves a partial blob under its final name", async () => {
    const bytes = makePng(40, 40, 1);
    const { steps } = await withWriteFault(null, "EIO", () => new BlobStore(join(tempDir(), "b"), { fsync: true }).putSync(bytes));
    for (const code of CODES) {
      for (let k = 0; k < steps; k++) {
        const dir = join(tempDir(), "b");
        const store = new BlobStore(dir, { fsync: true });
        const outcome = await withWriteFault(k, code, () => store.putSync(bytes));
        if (outcome.error !== undefined) expectCoded(outcome.error);
        await blobsIntact(dir);
        expect(existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".tmp")) : []).toEqual([]);
        expect(store.putSync(bytes).hash).toHaveLength(64);
        expect(store.getSync(store.putSync(bytes).hash)!.equals(bytes)).toBe(true);
      }
    }
  });

  it("artifact save: a failing step leaves no artifact (or a complete one) and a retry succeeds", async () => {
    const content = "artifact body ✓ ".repeat(5000);
    const { steps } = await withWriteFault(null, "EIO", () =>
      new ArtifactStore(join(tempDir(), "a"), { fsync: true }).save(content, { toolType: "bash" }),
    );
    expect(steps).toBeGreaterThan(2);
    for (const code of CODES) {
      for (let k = 0; k < steps; k++) {
        const dir = join(tempDir(), "a");
        const store = new ArtifactStore(dir, { fsync: true });
        store.save("earlier", { toolType: "bash" });
        const outcome = await withWriteFault(k, code, () => store.save(content, { toolType: "bash" }));
        if (outcome.error !== undefined) {
          expectCoded(outcome.error);
          expect(store.list().map((r) => store.getText(r.id))).toEqual(["earlier"]);
        }
        for (const ref of store.list()) expect(Buffer.byteLength(store.getText(ref.id)!)).toBe(ref.sizeBytes);
        const retry = store.save(content, { toolType: "bash" });
        expect(store.getText(retry.id)).toBe(content);
      }
    }
  });

  it("migrate: a failing step leaves the original untouched; a retry migrates", async () => {
    const dir = tempDir();
    const legacy = join(dir, "legacy.jsonl");
    writeImageHeavyLegacySession(legacy, { seed: 4, count: 3, imageSize: 20_000 });
    const probe = join(dir, "probe.jsonl");
    copyFileSync(legacy, probe);
    const { steps } = await withWriteFault(null, "EIO", () =>
      migrateFile(probe, { sessionsDir: join(dir, "s"), blobsDir: join(dir, "pb"), inPlace: true }),
    );
    expect(steps).toBeGreaterThan(3);
    const migrated = readFileSync(probe);
    for (const code of CODES) {
      for (let k = 0; k < steps; k++) {
        const root = tempDir();
        const path = join(root, "m.jsonl");
        copyFileSync(legacy, path);
        const outcome = await withWriteFault(k, code, () =>
          migrateFile(path, { sessionsDir: join(root, "s"), blobsDir: join(root, "blobs"), inPlace: true }),
        );
        const report = outcome.result!;
        expect(outcome.error).toBeUndefined(); // migrate reports, it does not throw
        if (report.status === "failed") {
          expect(report.error?.code).toMatch(/PERSISTENCE_FAILED|ENOSPC|EIO/);
          expect(
            originalOrCommitted(readFileSync(path), readFileSync(legacy), migrated, reported(report.error)),
            `${code} at step ${k}`,
          ).toBe(true);
        }
        await blobsIntact(join(root, "blobs"));
        const retry = await migrateFile(path, { sessionsDir: join(root, "s"), blobsDir: join(root, "blobs"), inPlace: true });
        expect(["migrated", "current"]).toContain(retry.status);
      }
    }
  });
});
