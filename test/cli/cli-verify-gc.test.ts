import { existsSync, mkdirSync, readFileSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { injectFault } from "../support/fault.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { blobDirEntries } from "../support/blob-dir.ts";
import { sha } from "../support/sha.ts";

async function storeWithImages(root: string, seeds: number[]) {
  const m = await SessionManager.create(join(root, "proj"), { root });
  for (const s of seeds)
    m.appendMessage({ role: "user", content: [{ type: "image", data: makePng(20, 20, s).toString("base64"), mimeType: "image/png" }] });
  await m.close();
  return m.sessionFile!;
}

function age(path: string, ms: number) {
  const t = new Date(Date.now() - ms);
  utimesSync(path, t, t);
}

describe("transcript-store verify", () => {
  it("a clean tree exits 0", async () => {
    const root = tempDir();
    await storeWithImages(root, [1, 2]);
    const run = await cli(["verify", "--root", root, "--json"]);
    expect(run.code).toBe(0);
    expect(run.records.at(-1)).toMatchObject({ type: "summary", files: 1, findings: 0 });
  });

  it("flags each kind of damage with its own finding and exits 1", async () => {
    const root = tempDir();
    const file = await storeWithImages(root, [1, 2]);
    const dir = join(file, "..");
    const header = (id: string) => JSON.stringify({ type: "session", version: 3, id, timestamp: "2025-01-01T00:00:00.000Z", cwd: "/x" });
    writeFileSync(join(dir, "2025-01-01T00-00-00-000Z_torn.jsonl"), `${header("torn")}\n{"type":"mess`);
    writeFileSync(join(dir, "2025-01-01T00-00-00-000Z_malformed.jsonl"), `${header("mal")}\n{nope}\n`);
    writeFileSync(join(dir, "2025-01-01T00-00-00-000Z_badheader.jsonl"), "garbage\n");
    writeFileSync(
      join(dir, "2025-01-01T00-00-00-000Z_parent.jsonl"),
      `${header("par")}\n${JSON.stringify({
        type: "message",
        id: "aaaaaaaa",
        parentId: "deadbeef",
        timestamp: "t",
        message: { role: "user", content: "x" },
      })}\n`,
    );
    mkdirSync(join(dir, "2025-01-01T00-00-00-000Z_orphan"));
    const blobs = blobDirEntries(join(root, "blobs"));
    unlinkSync(join(root, "blobs", blobs[0]!));
    writeFileSync(join(root, "blobs", blobs[1]!), "corrupted");
    const run = await cli(["verify", "--root", root, "--json"]);
    expect(run.code).toBe(1);
    const kinds = run.records
      .filter((r) => r.type === "finding")
      .map((r) => r.kind)
      .sort();
    expect(kinds).toEqual([
      "BAD_HEADER",
      "BLOB_CORRUPT",
      "BLOB_MISSING",
      "BROKEN_PARENT",
      "MALFORMED_LINE",
      "ORPHANED_ARTIFACTS",
      "TORN_TAIL",
    ]);
  });
});

describe("transcript-store gc", () => {
  it("deletes exactly the unreferenced blobs older than the grace period", async () => {
    const root = tempDir();
    const file = await storeWithImages(root, [1, 2]);
    const blobsDir = join(root, "blobs");
    const referenced = blobDirEntries(blobsDir).sort();
    const orphanOld = sha("old orphan");
    const orphanYoung = sha("young orphan");
    const onlyInQuarantine = sha("quarantined");
    const onlyInBak = sha("backed up");
    for (const [h, body] of [
      [orphanOld, "old orphan"],
      [orphanYoung, "young orphan"],
      [onlyInQuarantine, "quarantined"],
      [onlyInBak, "backed up"],
    ] as const)
      writeFileSync(join(blobsDir, h), body);
    writeFileSync(
      file.replace(/\.jsonl$/, ".quarantine.jsonl"),
      `${JSON.stringify({ type: "quarantine", text: `{"data":"blob:sha256:${onlyInQuarantine}"` })}\n`,
    );
    writeFileSync(`${file}.bak`, `{"type":"session","id":"b"}\n{"x":"blob:sha256:${onlyInBak}"}\n`);
    for (const h of [...referenced, orphanOld, onlyInQuarantine, onlyInBak]) age(join(blobsDir, h), 2 * 3600_000);

    const dry = await cli(["gc", "--dry-run", "--root", root, "--json"]);
    expect(dry.code).toBe(0);
    expect(dry.records.filter((r) => r.type === "would-delete").map((r) => r.hash)).toEqual([orphanOld]);
    expect(existsSync(join(blobsDir, orphanOld))).toBe(true);

    const run = await cli(["gc", "--root", root, "--json"]);
    expect(run.records.filter((r) => r.type === "deleted").map((r) => r.hash)).toEqual([orphanOld]);
    expect(blobDirEntries(blobsDir).sort()).toEqual([...referenced, orphanYoung, onlyInQuarantine, onlyInBak].sort());
    expect(run.records.at(-1)).toMatchObject({ keptYoung: 1, deleted: 1 });
  });

  it("refuses to delete anything when a session file cannot be read (EACCES through the I/O seam)", async () => {
    const root = tempDir();
    const file = await storeWithImages(root, [1]);
    const orphan = sha("orphan");
    writeFileSync(join(root, "blobs", orphan), "orphan");
    age(join(root, "blobs", orphan), 2 * 3600_000);
    const restore = injectFault("openSync", (_call, args) => (args[0] === file ? "EACCES" : undefined));
    let run;
    try {
      run = await cli(["gc", "--root", root, "--grace", "0"]);
    } finally {
      restore();
    }
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/PERSISTENCE_FAILED/);
    expect(readFileSync(join(root, "blobs", orphan), "utf8")).toBe("orphan");
    expect(blobDirEntries(join(root, "blobs"))).toHaveLength(2);
  });

  it("removes the lock declaration a writer never closed left without a lock, and says so (dry run first)", async () => {
    const root = tempDir();
    const file = await storeWithImages(root, [1]);
    // What a killed writer leaves once its lock directory is gone: the declaration alone.
    writeFileSync(`${file}.lock.json`, JSON.stringify({ pid: 999_999, staleMs: 10_000 }));
    const dry = await cli(["gc", "--dry-run", "--root", root]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("would remove the lock files of 1 writer(s) never closed");
    expect(existsSync(`${file}.lock.json`)).toBe(true);
    const run = await cli(["gc", "--root", root, "--json"]);
    expect(run.records.at(-1)).toMatchObject({ type: "summary", lockFilesRemoved: 1 });
    expect(existsSync(`${file}.lock.json`)).toBe(false);
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect((await cli(["gc", "--root", root, "--json"])).records.at(-1)).toMatchObject({ lockFilesRemoved: 0 });
  });
});
