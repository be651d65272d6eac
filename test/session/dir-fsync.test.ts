import { appendFileSync, copyFileSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { io } from "../../src/io.ts";
import { forgetReferrers, registerReferrer } from "../../src/blob/blob-referrers.ts";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { codeOf } from "../support/error-code.ts";
import { injectFault } from "../support/fault.ts";
import { recordDirSyncs } from "../support/dir-sync-recorder.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

const FIXTURES = join(import.meta.dirname, "../../fixtures/sessions");
let recorder: ReturnType<typeof recordDirSyncs> | null = null;
afterEach(() => {
  recorder?.restore();
  recorder = null;
});

function image(seed: number) {
  return { role: "user", content: [{ type: "image", data: makePng(16, 16, seed).toString("base64"), mimeType: "image/png" }] };
}

/** Runs `step` and returns every name it created or renamed whose directory it did not fsync after. */
async function unsyncedBy(step: () => unknown): Promise<string[]> {
  recorder!.unsynced(); // what happened before this step is not its business
  await step();
  return recorder!.unsynced();
}

describe("fsync: true makes every new name durable (its directory fsynced after each create and rename)", () => {
  it("a new session in a new bucket, its blobs, registry, artifacts, fork, move and close", async () => {
    const root = tempDir();
    recorder = recordDirSyncs();
    let m!: SessionManager;
    expect(await unsyncedBy(async () => (m = await SessionManager.create(join(root, "proj"), { root, fsync: true })))).toEqual([]);
    expect(await unsyncedBy(() => m.appendMessage({ role: "user", content: "hello" }))).toEqual([]);
    expect(await unsyncedBy(() => m.appendMessage(image(1)))).toEqual([]);
    expect(await unsyncedBy(() => m.artifacts!.save("output", { toolType: "bash" }))).toEqual([]);
    expect(
      await unsyncedBy(() => {
        const w = m.artifacts!.createWriter("bash");
        w.write("streamed");
        return w.finish();
      }),
    ).toEqual([]);
    let fork!: SessionManager;
    expect(await unsyncedBy(async () => (fork = await m.fork({ cwd: join(root, "elsewhere") })))).toEqual([]);
    expect(await unsyncedBy(() => fork.appendMessage({ role: "user", content: "in the fork" }))).toEqual([]);
    expect(await unsyncedBy(() => fork.close())).toEqual([]);
    expect(await unsyncedBy(() => m.moveTo(join(root, "moved")))).toEqual([]);
    expect(await unsyncedBy(() => m.close())).toEqual([]);
  });

  it("a torn tail quarantined, a legacy file rewritten, a giant-free v1 file with images migrated", async () => {
    const root = tempDir();
    const repo = tempDir("ts-repo-");
    copyFileSync(join(FIXTURES, "v3-torn-tail.jsonl"), join(repo, "torn.jsonl"));
    copyFileSync(join(FIXTURES, "v1-pi-legacy-with-images.jsonl"), join(repo, "legacy.jsonl"));
    recorder = recordDirSyncs();
    expect(await unsyncedBy(async () => (await SessionManager.open(join(repo, "torn.jsonl"), { root, fsync: true })).close())).toEqual([]);
    expect(await unsyncedBy(async () => (await SessionManager.open(join(repo, "legacy.jsonl"), { root, fsync: true })).close())).toEqual(
      [],
    );
  });

  it("migrate in place with a backup, and into the store's tree", async () => {
    const root = tempDir();
    const repo = tempDir("ts-repo-");
    copyFileSync(join(FIXTURES, "v1-pi-legacy-with-images.jsonl"), join(repo, "a.jsonl"));
    copyFileSync(join(FIXTURES, "v2-hook-message.jsonl"), join(repo, "b.jsonl"));
    const options = { sessionsDir: join(root, "sessions"), blobsDir: join(root, "blobs"), fsync: true };
    recorder = recordDirSyncs();
    expect(await unsyncedBy(() => migrateFile(join(repo, "a.jsonl"), { ...options, inPlace: true, backup: true }))).toEqual([]);
    expect(await unsyncedBy(() => migrateFile(join(repo, "b.jsonl"), options))).toEqual([]);
  });

  it("the blob store's registry: a first registration and a forget", async () => {
    const blobsDir = join(tempDir(), "store", "blobs");
    recorder = recordDirSyncs();
    expect(await unsyncedBy(() => registerReferrer(blobsDir, { kind: "dir", path: "/a" }))).toEqual([]);
    expect(await unsyncedBy(() => registerReferrer(blobsDir, { kind: "dir", path: "/b" }))).toEqual([]);
    expect(await unsyncedBy(() => forgetReferrers(blobsDir, ["/a"]))).toEqual([]);
  });

  it("a session appended to where pi left an empty directory and a file of its own", async () => {
    const root = tempDir();
    const dir = join(tempDir("ts-repo-"), "nested", "deeper");
    mkdirSync(dir, { recursive: true });
    appendFileSync(join(dir, "x.jsonl"), "");
    recorder = recordDirSyncs();
    let m!: SessionManager;
    expect(await unsyncedBy(async () => (m = await SessionManager.open(join(dir, "y.jsonl"), { root, fsync: true })))).toEqual([]);
    expect(await unsyncedBy(() => m.appendMessage({ role: "user", content: "hi" }))).toEqual([]);
    await m.close();
  });
});

describe("a directory fsync that fails", () => {
  it("fails the append that needed it (PERSISTENCE_FAILED) when the disk reports EIO, and is skipped where unsupported", async () => {
    const root = tempDir();
    const dirFds = new Set<number>();
    const restoreOpen = (() => {
      const original = io.openSync;
      (io as { openSync: unknown }).openSync = (...args: Parameters<typeof io.openSync>) => {
        const fd = original(...args);
        if (args[1] === "r" && statSync(String(args[0])).isDirectory()) dirFds.add(fd);
        return fd;
      };
      return () => ((io as { openSync: unknown }).openSync = original);
    })();
    let code: string | undefined = "EIO";
    const restoreSync = injectFault("fsyncSync", (_c, args) => (dirFds.has(args[0] as number) ? code : undefined));
    try {
      // The new bucket cannot be made durable: nothing is created on a promise the disk broke.
      await expect(SessionManager.create(join(root, "proj"), { root, fsync: true })).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
      code = undefined;
      const m = await SessionManager.create(join(root, "proj"), { root, fsync: true, deferUntilAssistant: true });
      code = "EIO"; // the session file's own name, on its first write
      expect(codeOf(() => m.appendMessage({ role: "assistant", content: "x" }))).toBe("PERSISTENCE_FAILED");
      expect(m.getEntries()).toEqual([]);
      await m.close();
      code = "EINVAL"; // a file system that cannot fsync a directory: best effort, not a failure
      const ok = await SessionManager.create(join(root, "proj2"), { root, fsync: true });
      ok.appendMessage({ role: "user", content: "kept" });
      await ok.close();
      expect(readFileSync(ok.sessionFile!, "utf8")).toContain('"kept"');
    } finally {
      restoreSync();
      restoreOpen();
    }
  });
});
