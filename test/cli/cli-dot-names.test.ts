import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliProcess } from "../support/cli.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

/** A pi v1 session (no version) holding one inline image of its own. */
function v1Session(id: string, png: Buffer): string {
  const lines = [
    { type: "session", id, timestamp: "2025-01-01T00:00:00.000Z", cwd: `/home/u/${id}` },
    {
      type: "message",
      timestamp: "t",
      message: { role: "user", content: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }] },
    },
    { type: "message", timestamp: "t", message: { role: "assistant", content: [{ type: "text", text: `reply ${id}` }] } },
  ];
  return `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
}

const records = (out: Buffer) =>
  out
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);

describe("the CLI's file walk (migrate, verify, stats) reads dot-named sessions and dot-directories", () => {
  it("migrates, verifies and counts .session.jsonl and sessions/.archive/…; our temp files stay untouched", async () => {
    const root = tempDir("ts-dot-");
    const sessions = join(root, "sessions");
    const pngs = [1, 2, 3].map((n) => makePng(64, 64, n));
    const plain = join(sessions, "-plain", "2025-01-01T00-00-00-000Z_plain.jsonl");
    const dotFile = join(sessions, "-repo", ".session.jsonl");
    const archived = join(sessions, ".archive", "2025", "2025-01-01T00-00-00-000Z_archived.jsonl");
    const files = [plain, dotFile, archived];
    files.forEach((f, i) => {
      mkdirSync(join(f, ".."), { recursive: true });
      writeFileSync(f, v1Session(["plain", "dotted", "archived"][i]!, pngs[i]!));
    });
    // what our writers leave beside a session while writing it (tempPathFor), and a quarantine: not sessions
    const temp = join(sessions, "-repo", `.session.jsonl.4242.0123456789ab.tmp`);
    const quarantine = join(sessions, "-repo", "x.quarantine.jsonl");
    writeFileSync(temp, v1Session("temp", pngs[0]!).slice(0, 40));
    writeFileSync(quarantine, v1Session("quarantined", pngs[0]!));
    const untouched = [temp, quarantine].map((f) => readFileSync(f));

    // before the fix: one file (plain) migrated, the others left with their inline images
    const migrated = await cliProcess(["migrate", "--in-place", "--root", root, "--json"]);
    expect(migrated.code, migrated.stderr.toString()).toBe(0);
    const reports = records(migrated.stdout).filter((r) => r.type === "file");
    expect(reports.map((r) => [r.source, r.status]).sort()).toEqual(files.map((f) => [f, "migrated"]).sort());
    files.forEach((f, i) => {
      const [header, image] = readFileSync(f, "utf8")
        .split("\n")
        .map((l) => (l === "" ? null : JSON.parse(l)));
      expect(header.version).toBe(3);
      expect(image.message.content[0].data).toBe(`blob:sha256:${sha(pngs[i]!)}`);
      expect(readFileSync(join(root, "blobs", sha(pngs[i]!)))).toEqual(pngs[i]);
    });
    expect([temp, quarantine].map((f) => readFileSync(f))).toEqual(untouched);

    // before the fix: verify checked one file, and the blobs of the others were never looked at
    rmSync(join(root, "blobs", sha(pngs[1]!)));
    rmSync(join(root, "blobs", sha(pngs[2]!)));
    const verified = await cliProcess(["verify", "--root", root, "--json"]);
    expect(verified.code).toBe(1);
    const out = records(verified.stdout);
    expect(
      out
        .filter((r) => r.type === "finding")
        .map((r) => [r.kind, r.path])
        .sort(),
    ).toEqual(
      [
        ["BLOB_MISSING", archived],
        ["BLOB_MISSING", dotFile],
      ].sort(),
    );
    expect(out.find((r) => r.type === "summary")).toMatchObject({ files: 3, entries: 6, findings: 2 });

    // the whole root: the blob store's own registry (blobs/.referrers.jsonl) is no session to check
    expect(readFileSync(join(root, "blobs", ".referrers.jsonl"), "utf8")).toContain(sessions);
    const whole = records((await cliProcess(["verify", root, "--root", root, "--json"])).stdout);
    expect(whole.filter((r) => r.type === "finding").map((r) => r.path)).not.toContain(join(root, "blobs", ".referrers.jsonl"));
    expect(whole.find((r) => r.type === "summary")).toMatchObject({ files: 3, findings: 2 });

    // before the fix: 1 session, 0 references (the others were never read). stats counts what
    // `ls --all` lists: the dot-named file of a cwd's bucket, not sessions/.archive/ (no cwd's bucket)
    const stats = await cliProcess(["stats", "--root", root, "--json"]);
    expect(stats.code).toBe(0);
    expect(records(stats.stdout)[0]).toMatchObject({ sessions: 2, blobs: 1, references: 2, referencedBlobs: 2 });
  }, 60_000);
});
