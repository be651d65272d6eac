import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { tempDir } from "../support/temp-dir.ts";

const savedTmp = process.env.TMPDIR;
afterEach(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
});

const host = hostname()
  .replace(/[^A-Za-z0-9.-]/g, "_")
  .slice(0, 64);
// above every pid_max Linux allows (2^22): certainly not running
const DEAD_PID = 99_999_999;

describe("migrate --dry-run drafts (a copy of the session) in the OS temp dir", () => {
  it("live in a working directory of this process, and what a killed dry run left is reclaimed by the next", async () => {
    const tmp = tempDir("ts-dry-tmp-");
    process.env.TMPDIR = tmp;
    const src = join(tempDir(), "legacy.jsonl");
    const header = { type: "session", version: 2, id: "s1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" };
    const entry = {
      type: "message",
      id: "e1",
      parentId: null,
      timestamp: "2026-01-01T00:00:01.000Z",
      message: { role: "user", content: "x" },
    };
    writeFileSync(src, `${JSON.stringify(header)}\n${JSON.stringify(entry)}\n`);
    // what a dry run killed mid-way left: its draft, in its owner's working directory
    const root = join(tmp, `transcript-store-dry-run-${process.getuid!()}`);
    const dead = join(root, `${DEAD_PID}@${host}-aaaaaa`);
    mkdirSync(dead, { recursive: true, mode: 0o700 });
    writeFileSync(join(dead, "draft.jsonl"), "a copy of someone's session\n");
    const store = tempDir();
    const report = await migrateFile(src, { sessionsDir: join(store, "sessions"), blobsDir: join(store, "blobs"), dryRun: true });
    expect(report.error).toBeUndefined();
    expect(existsSync(dead)).toBe(false);
    expect(readdirSync(root)).toEqual([]);
    expect(
      readdirSync(tmp).filter((n) => n.startsWith("transcript-store-dry-run-") && n !== `transcript-store-dry-run-${process.getuid!()}`),
    ).toEqual([]);
  });
});
