import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { BlobStore } from "../../src/blob/blob-store.ts";
import { collectGarbage } from "../../src/maintenance/gc.ts";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { cwdBucket } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { injectFault, opensForWriting } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";

const HOSTILE = [
  "../../etc/passwd",
  "..",
  ".",
  "a/b",
  "%2e%2e%2f",
  "..\\..\\windows",
  "x".repeat(300),
  "\u0000nul",
  "/absolute/path",
  "~root",
  "\n",
];

function inside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith("/");
}

/** Every path under `dir`, without following symlinks. */
function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    out.push(p);
    if (e.isDirectory()) out.push(...walk(p));
  }
  return out;
}

describe("hostile names and planted symlinks", () => {
  it("cwd values of any shape land in one bucket inside the sessions directory", async () => {
    const root = tempDir();
    for (const cwd of ["../../../../etc", "/", "/..", "C:\\Users\\x", "a/../../b", "x".repeat(300), "/tmp/../etc/passwd"]) {
      const bucket = cwdBucket(cwd);
      expect(bucket).not.toMatch(/[/\\]/);
      expect([".", ".."]).not.toContain(bucket);
      const m = await SessionManager.create(cwd, { root });
      expect(inside(join(root, "sessions"), m.sessionFile!)).toBe(true);
      await m.close();
    }
  });

  it("session ids, prefixes and CLI arguments never reach outside the store", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "p"), { root });
    await m.close();
    for (const arg of HOSTILE) {
      await expect(SessionManager.resolve(arg, root, { root })).rejects.toMatchObject({
        code: expect.stringMatching(/SESSION_NOT_FOUND|SESSION_AMBIGUOUS/),
      });
      const run = await cli(["show", arg, "--root", root]);
      expect([1, 2]).toContain(run.code);
      expect(run.stdout).toBe("");
    }
  });

  it("a hostile header id and cwd in an imported or migrated file stay inside the store", async () => {
    const src = tempDir();
    const root = tempDir();
    const header = {
      type: "session",
      version: 3,
      id: "../../../../escape",
      timestamp: "2025-01-01T00:00:00.000Z",
      cwd: "../../../../../etc",
    };
    writeFileSync(join(src, "hostile.jsonl"), `${JSON.stringify(header)}\n`);
    const report = await migrateFile(join(src, "hostile.jsonl"), { sessionsDir: join(root, "sessions"), blobsDir: join(root, "blobs") });
    expect(report.status).toBe("imported");
    expect(inside(join(root, "sessions"), report.target)).toBe(true);
    const imported = await cli(["import", "--root", root, "--json"], {
      stdin: `${JSON.stringify({ ...header, id: "../../../elsewhere" })}\n`,
    });
    expect(imported.code).toBe(0);
    expect(inside(join(root, "sessions"), imported.records[0]!.path)).toBe(true);
    for (const p of walk(root)) expect(inside(root, p)).toBe(true);
  });

  it("symlinks planted in a sessions tree and the blob directory are not followed by listing, migrate or gc", async () => {
    const root = tempDir();
    const outside = tempDir("ts-outside-");
    writeFileSync(join(outside, "victim.jsonl"), '{"type":"session","version":3,"id":"victim","timestamp":"t","cwd":"/"}\n');
    writeFileSync(join(outside, "secret"), "top secret");
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendMessage({ role: "user", content: "x" });
    await m.close();
    const bucket = join(root, "sessions", cwdBucket(join(root, "p")));
    symlinkSync(join(outside, "victim.jsonl"), join(bucket, "2025-01-01T00-00-00-000Z_victim.jsonl"));
    symlinkSync(outside, join(root, "sessions", "-linked-bucket"));
    mkdirSync(join(root, "blobs"), { recursive: true });
    const fakeHash = "f".repeat(64);
    symlinkSync(join(outside, "secret"), join(root, "blobs", fakeHash));

    expect((await SessionManager.listAll({ root })).map((s) => s.id)).toEqual([m.sessionId]);
    const migrate = await cli(["migrate", "--root", root, "--in-place", "--json"]);
    expect(migrate.records.filter((r) => r.type === "file")).toHaveLength(1);
    const store = new BlobStore(join(root, "blobs"));
    await expect(store.get(fakeHash)).rejects.toMatchObject({ code: "BLOB_CORRUPT" });
    await collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: join(root, "blobs"), graceMs: 0 });
    expect(readFileSync(join(outside, "secret"), "utf8")).toBe("top secret");
    expect(readFileSync(join(outside, "victim.jsonl"), "utf8")).toContain("victim");
    expect(existsSync(join(root, "blobs", fakeHash))).toBe(false); // the link itself was collected, not its target
  });
});

describe("permissions", () => {
  it("creates session files, blobs and quarantine files 0600 and directories 0700", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendMessage({ role: "user", content: [{ type: "image", data: Buffer.alloc(2000, 7).toString("base64"), mimeType: "image/png" }] });
    await m.close();
    writeFileSync(m.sessionFile!, `${readFileSync(m.sessionFile!, "utf8")}{"type":"mess`);
    const again = await SessionManager.open(m.sessionFile!, { root });
    await again.close();
    for (const p of walk(root)) {
      if (p.endsWith(".lock")) continue; // proper-lockfile's own directory
      const mode = statSync(p).mode & 0o777;
      expect(mode, p).toBe(statSync(p).isDirectory() ? 0o700 : 0o600);
    }
  });

  it("a read-only sessions or blob directory gives a clear code and loses nothing", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendMessage({ role: "user", content: "kept" });
    await m.close();
    const bytes = readFileSync(m.sessionFile!);
    const roSessions = injectFault("openSync", (_c, args) =>
      String(args[0]).startsWith(join(root, "sessions")) && opensForWriting(args[1]) ? "EROFS" : undefined,
    );
    try {
      const opened = await SessionManager.open(m.sessionFile!, { root });
      expect(() => opened.appendMessage({ role: "user", content: "nope" })).toThrow(
        expect.objectContaining({ code: "PERSISTENCE_FAILED" }),
      );
      await opened.close();
      await expect(SessionManager.create(join(root, "q"), { root })).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    } finally {
      roSessions();
    }
    expect(readFileSync(m.sessionFile!).equals(bytes)).toBe(true);
    const roBlobs = injectFault("openSync", (_c, args) =>
      String(args[0]).startsWith(join(root, "blobs")) && opensForWriting(args[1]) ? "EROFS" : undefined,
    );
    try {
      const opened = await SessionManager.open(m.sessionFile!, { root });
      expect(() =>
        opened.appendMessage({
          role: "user",
          content: [{ type: "image", data: Buffer.alloc(3000, 1).toString("base64"), mimeType: "image/png" }],
        }),
      ).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
      opened.appendMessage({ role: "user", content: "text still works" });
      await opened.close();
    } finally {
      roBlobs();
    }
    const final = await SessionManager.open(m.sessionFile!, { root, readOnly: true });
    expect(final.getEntries().map((e) => (e.message as { content: unknown }).content)).toEqual(["kept", "text still works"]);
  });
});
