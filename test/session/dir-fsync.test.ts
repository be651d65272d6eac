import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { io } from "../../src/io.ts";
import { forgetReferrers, registerReferrer } from "../../src/blob/blob-referrers.ts";
import { PROOF_LOG_FILE } from "../../src/blob/proof-log.ts";
import { SessionFile } from "../../src/session/session-file.ts";
import { SessionManager as PiSessionManager } from "../../src/pi/session-manager.ts";
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

/**
 * Runs `step` and returns every name it created or renamed whose directory it did not fsync after.
 * The blob directory's proof log is a cache (docs/architecture.md: never fsynced, a lost proof costs
 * one re-hash), so its name is not one that must be durable.
 */
async function unsyncedBy(step: () => unknown): Promise<string[]> {
  recorder!.unsynced(); // what happened before this step is not its business
  await step();
  return recorder!.unsynced().filter((change) => !change.includes(`/${PROOF_LOG_FILE} (`));
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

  it("pi's drop-in: a new session in pi's tree (its default session directory created on the way)", async () => {
    const agentDir = join(tempDir(), "agent");
    recorder = recordDirSyncs();
    let pi!: PiSessionManager;
    expect(await unsyncedBy(() => (pi = PiSessionManager.create("/home/me/proj", undefined, { agentDir, fsync: true })))).toEqual([]);
    // pi's own mkdir of its default session directory: every directory it made, and the one above.
    const bucket = pi.getSessionDir();
    const synced = recorder.events.flatMap((e) => (e.op === "fsync" ? [e.dir] : []));
    for (const dir of [bucket, dirname(bucket), agentDir, dirname(agentDir)]) expect(synced, dir).toContain(dir);
    expect(await unsyncedBy(() => pi.appendMessage({ role: "user", content: "hi", timestamp: 1 }))).toEqual([]);
    expect(await unsyncedBy(() => pi.appendMessage({ role: "assistant", content: [], timestamp: 2 } as never))).toEqual([]);
    pi.close();
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

/** Fails the fsync of any directory `fail` names (returns an errno code), through the I/O seam. */
function failDirFsyncs(fail: (dir: string) => string | undefined): () => void {
  const dirOf = new Map<number, string>();
  const open = io.openSync;
  (io as { openSync: unknown }).openSync = (...args: Parameters<typeof io.openSync>) => {
    const fd = open(...args);
    if (args[1] === "r" && statSync(String(args[0])).isDirectory()) dirOf.set(fd, String(args[0]));
    return fd;
  };
  const restoreSync = injectFault("fsyncSync", (_c, args) => {
    const dir = dirOf.get(args[0] as number);
    return dir === undefined ? undefined : fail(dir);
  });
  return () => {
    restoreSync();
    (io as { openSync: unknown }).openSync = open;
  };
}

describe("a directory fsync that fails", () => {
  it("fails the append that needed it (PERSISTENCE_FAILED) when the disk reports EIO, and is skipped where unsupported", async () => {
    const root = tempDir();
    let code: string | undefined = "EIO";
    const restore = failDirFsyncs(() => code);
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
      restore();
    }
  });

  it("a move whose new directory cannot be made durable is undone; one whose old directory cannot is kept, with a warning", async () => {
    const root = tempDir();
    const warnings: string[] = [];
    const m = await SessionManager.create(join(root, "a"), { root, fsync: true, onWarning: (w) => warnings.push(w.code) });
    m.appendMessage({ role: "user", content: "precious" });
    const from = m.sessionFile!;
    const fromDir = dirname(from);
    const other = await SessionManager.create(join(root, "b"), { root }); // b's bucket exists
    other.appendMessage({ role: "user", content: "other" });
    await other.close();
    const toDir = dirname(other.sessionFile!);
    // Only once the new file is under its name: the note and journal before it are synced fine.
    let restore = failDirFsyncs((dir) => (dir === toDir && existsSync(join(toDir, basename(from))) ? "EIO" : undefined));
    try {
      await expect(m.moveTo(join(root, "b"))).rejects.toMatchObject({ code: "MOVE_FAILED" });
    } finally {
      restore();
    }
    expect(readFileSync(from, "utf8")).toContain("precious");
    expect(existsSync(join(toDir, basename(from)))).toBe(false);
    restore = failDirFsyncs((dir) => (dir === fromDir && !existsSync(from) ? "EIO" : undefined)); // after the old file went
    try {
      await m.moveTo(join(root, "c"));
    } finally {
      restore();
    }
    expect(existsSync(from)).toBe(false);
    expect(readFileSync(m.sessionFile!, "utf8")).toContain("precious");
    expect(warnings).toContain("MOVE_FAILED");
    m.appendMessage({ role: "user", content: "after" });
    await m.close();
    expect(readFileSync(m.sessionFile!, "utf8")).toContain('"after"');
  });

  it("a rewrite whose directory fsync fails is reported, and the next append lands in the rewritten file", () => {
    const dir = tempDir();
    const path = join(dir, "s.jsonl");
    const file = new SessionFile(path, { fsync: true, now: () => new Date(0) });
    file.append(Buffer.from("old\n"));
    const restore = failDirFsyncs((d) => (d === dir ? "EIO" : undefined));
    try {
      expect(codeOf(() => file.rewrite((emit) => emit(Buffer.from("new\n"))))).toBe("PERSISTENCE_FAILED");
    } finally {
      restore();
    }
    file.append(Buffer.from("next\n"));
    file.close();
    expect(readFileSync(path, "utf8")).toBe("new\nnext\n");
  });
});
