import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { registerReferrer } from "../../src/blob/blob-referrers.ts";
import { collectGarbage } from "../../src/maintenance/gc.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { blobDirEntries } from "../support/blob-dir.ts";
import { injectFault } from "../support/fault.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

const HOUR = 3600_000;

function ageAll(dir: string): void {
  const t = new Date(Date.now() - 2 * HOUR);
  for (const name of blobDirEntries(dir)) utimesSync(join(dir, name), t, t);
}

/** A session with one image at `file` (explicit path); returns the image's hash. */
async function sessionAt(root: string, file: string, seed: number): Promise<string> {
  const png = makePng(20, 20, seed);
  const m = await SessionManager.open(file, { root });
  m.appendMessage({ role: "user", content: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }] });
  await m.close();
  return sha(png);
}

/** A session with one image in the store's own tree; returns its file and the image's hash. */
async function treeSession(root: string, seed: number): Promise<{ file: string; hash: string }> {
  const png = makePng(20, 20, seed);
  const m = await SessionManager.create(join(root, "proj"), { root });
  m.appendMessage({ role: "user", content: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }] });
  await m.close();
  return { file: m.sessionFile!, hash: sha(png) };
}

function gc(root: string) {
  return collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: join(root, "blobs"), graceMs: 0 });
}

/** An unreferenced, old blob: what gc must delete once it runs at all. */
function plantOrphan(root: string): string {
  const hash = sha("orphan");
  writeFileSync(join(root, "blobs", hash), "orphan");
  ageAll(join(root, "blobs"));
  return hash;
}

describe("gc reads every file a registered place holds", () => {
  it("keeps the images of a session in a dot-named file (pi's open(path) makes .session.jsonl)", async () => {
    const root = tempDir();
    const repo = tempDir("ts-repo-");
    const hash = await sessionAt(root, join(repo, ".session.jsonl"), 1);
    const orphan = plantOrphan(root);
    mkdirSync(join(root, "sessions"), { recursive: true });
    expect((await gc(root)).deleted).toEqual([orphan]);
    expect(blobDirEntries(join(root, "blobs"))).toEqual([hash]);
  });

  it("keeps the images of sessions kept under a dot-directory of the tree (sessions/.archive/)", async () => {
    const root = tempDir();
    const { file, hash } = await treeSession(root, 2);
    const archive = join(root, "sessions", ".archive", "2025");
    mkdirSync(archive, { recursive: true });
    renameSync(file, join(archive, "old.jsonl"));
    const orphan = plantOrphan(root);
    expect((await gc(root)).deleted).toEqual([orphan]);
    expect(blobDirEntries(join(root, "blobs"))).toEqual([hash]);
  });

  it("keeps the images of a session file with any other name or extension (chat.log, no extension, .jsonl.old)", async () => {
    const root = tempDir();
    const repo = tempDir("ts-repo-");
    const hashes = [
      await sessionAt(root, join(repo, "chat.log"), 3),
      await sessionAt(root, join(repo, "transcript"), 4),
      await sessionAt(root, join(repo, "x.jsonl"), 5),
    ];
    renameSync(join(repo, "x.jsonl"), join(repo, "x.jsonl.old"));
    const orphan = plantOrphan(root);
    mkdirSync(join(root, "sessions"), { recursive: true });
    expect((await gc(root)).deleted).toEqual([orphan]);
    expect(blobDirEntries(join(root, "blobs")).sort()).toEqual(hashes.sort());
  });

  it("reads a session behind a symlinked file and refuses, deleting nothing, when a link cannot be resolved", async () => {
    const root = tempDir();
    const elsewhere = tempDir("ts-elsewhere-");
    const { file, hash } = await treeSession(root, 6);
    renameSync(file, join(elsewhere, "moved.jsonl")); // moved away by the user, a link left in its place
    symlinkSync(join(elsewhere, "moved.jsonl"), file);
    const orphan = plantOrphan(root);
    expect((await gc(root)).deleted).toEqual([orphan]);
    expect(blobDirEntries(join(root, "blobs"))).toEqual([hash]);

    const orphan2 = plantOrphan(root);
    symlinkSync(join(elsewhere, "unmounted", "s.jsonl"), join(dirname(file), ".dangling.jsonl"));
    await expect(gc(root)).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    expect(blobDirEntries(join(root, "blobs")).sort()).toEqual([hash, orphan2].sort());
  });

  it("refuses, deleting nothing, when a dot-named file or a dot-directory cannot be read (EACCES through the I/O seam)", async () => {
    const root = tempDir();
    const { file, hash } = await treeSession(root, 7);
    const hidden = join(dirname(file), ".hidden.jsonl");
    renameSync(file, hidden);
    mkdirSync(join(root, "sessions", ".archive"));
    const orphan = plantOrphan(root);
    for (const fault of [
      injectFault("openSync", (_c, args) => (args[0] === hidden ? "EACCES" : undefined)),
      injectFault("readdirSync", (_c, args) => (args[0] === join(root, "sessions", ".archive") ? "EACCES" : undefined)),
    ]) {
      try {
        await expect(gc(root)).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
      } finally {
        fault();
      }
      expect(blobDirEntries(join(root, "blobs")).sort()).toEqual([hash, orphan].sort());
    }
  });

  it("skips a FIFO in a registered place instead of blocking on it", async () => {
    const root = tempDir();
    const repo = tempDir("ts-repo-");
    const hash = await sessionAt(root, join(repo, "chat.jsonl"), 8);
    execFileSync("mkfifo", [join(repo, ".pipe.jsonl")]);
    const orphan = plantOrphan(root);
    mkdirSync(join(root, "sessions"), { recursive: true });
    expect((await gc(root)).deleted).toEqual([orphan]);
    expect(blobDirEntries(join(root, "blobs"))).toEqual([hash]);
    expect(readdirSync(repo)).toContain(".pipe.jsonl");
  });
});

describe("gc's second look before it deletes", () => {
  it("marks a place registered while gc ran (its sessions reference a blob gc had moved aside)", async () => {
    const root = tempDir();
    const blobsDir = join(root, "blobs");
    await treeSession(root, 9);
    const orphan = plantOrphan(root);
    const late = tempDir("ts-late-");
    // Another process registers a new place and writes a ref to the orphan while gc sweeps.
    const restore = injectFault("renameSync", (_c, args) => {
      if (String(args[1]).endsWith(".gc.tmp") && !existsSync(join(late, "s.jsonl"))) {
        registerReferrer(blobsDir, { kind: "dir", path: late });
        writeFileSync(
          join(late, "s.jsonl"),
          `{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}\n"blob:sha256:${orphan}"\n`,
        );
      }
      return undefined;
    });
    try {
      expect((await gc(root)).deleted).toEqual([]);
    } finally {
      restore();
    }
    expect(blobDirEntries(blobsDir)).toContain(orphan);
    expect(blobDirEntries(blobsDir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("puts back every blob it moved aside when the second look cannot read a file", async () => {
    const root = tempDir();
    const { hash } = await treeSession(root, 10);
    const orphan = plantOrphan(root);
    let trashed = false;
    const restoreRename = injectFault("renameSync", (_c, args) => {
      if (String(args[1]).endsWith(".gc.tmp")) trashed = true;
      return undefined;
    });
    const restoreRead = injectFault("readdirSync", (_c, args) => (trashed && args[0] === join(root, "sessions") ? "EIO" : undefined));
    try {
      await expect(gc(root)).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    } finally {
      restoreRead();
      restoreRename();
    }
    expect(blobDirEntries(join(root, "blobs")).sort()).toEqual([hash, orphan].sort());
  });
});
