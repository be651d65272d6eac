import { appendFileSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { acquireSessionLock } from "../../src/session/session-lock.ts";
import { cli } from "../support/cli.ts";
import { makePng } from "../support/png.ts";
import { writePiSession } from "../support/pi-tree.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

const TIME = "2026-01-02T03:04:05.678Z";

/** A pi tree with one session holding an inline image (what pi writes). */
function piTree() {
  const base = tempDir();
  const sessionsDir = join(base, "agent", "sessions");
  const blobsDir = join(base, "blobs");
  const png = makePng(16, 16, 3).toString("base64");
  const file = writePiSession(sessionsDir, join(base, "proj"), {
    id: "019a0000-0000-7000-8000-0000000000c3",
    time: TIME,
    lines: [
      {
        type: "message",
        id: "11111111",
        parentId: null,
        timestamp: TIME,
        message: {
          role: "user",
          content: [
            { type: "text", text: "see" },
            { type: "image", data: png, mimeType: "image/png" },
          ],
          timestamp: 1,
        },
      },
    ],
  });
  return { base, sessionsDir, blobsDir, png, file, dirs: ["--sessions-dir", sessionsDir, "--blobs-dir", blobsDir] };
}

describe("images in a pi tree: the switch is explicit, and there is a way back", () => {
  it("migrate --in-place on a pi tree warns that pi reads blob refs as image data and names the way back", async () => {
    const t = piTree();
    const migrated = await cli(["migrate", "--in-place", ...t.dirs]);
    expect(migrated.code).toBe(0);
    expect(migrated.stderr).toMatch(/pi .*blob:sha256: refs/);
    expect(migrated.stderr).toContain("transcript-store inline-images");
    // An omp tree gets no such warning.
    const omp = tempDir();
    const quiet = await cli([
      "migrate",
      "--in-place",
      "--sessions-dir",
      join(omp, "sessions"),
      "--blobs-dir",
      join(omp, "blobs"),
      "--layout",
      "omp",
    ]);
    expect(quiet.stderr).not.toContain("inline-images");
  });

  it("inline-images puts every image back inline in place (pi-readable), every other byte kept, idempotent", async () => {
    const t = piTree();
    const original = readFileSync(t.file, "utf8");
    expect((await cli(["migrate", "--in-place", ...t.dirs])).code).toBe(0);
    const hash = sha(Buffer.from(t.png, "base64"));
    // A malformed line a writer left: kept where it is.
    appendFileSync(t.file, "{not json\n");
    const withRefs = readFileSync(t.file, "utf8");
    expect(withRefs).toContain(`blob:sha256:${hash}`);
    const back = await cli(["inline-images", ...t.dirs, "--json"]);
    expect(back.code).toBe(0);
    expect(back.records.filter((r) => r.type === "file")).toEqual([
      expect.objectContaining({ path: t.file, status: "inlined", images: 1 }),
    ]);
    const text = readFileSync(t.file, "utf8");
    expect(text).not.toContain("blob:sha256:");
    expect(text).toBe(`${original}{not json\n`);
    const again = await cli(["inline-images", ...t.dirs, "--json"]);
    expect(again.records.filter((r) => r.type === "file")).toEqual([
      expect.objectContaining({ path: t.file, status: "unchanged", images: 0 }),
    ]);
    expect(readFileSync(t.file, "utf8")).toBe(text);
  });

  it("a missing blob or a live writer: that file is left untouched and the run fails", async () => {
    const t = piTree();
    expect((await cli(["migrate", "--in-place", ...t.dirs])).code).toBe(0);
    const withRefs = readFileSync(t.file, "utf8");
    const lock = await acquireSessionLock(t.file, { onCompromised: () => {} });
    const locked = await cli(["inline-images", ...t.dirs, "--json"]);
    expect(locked.code).toBe(1);
    expect(locked.records.find((r) => r.type === "file")).toMatchObject({ status: "failed", code: "SESSION_LOCKED" });
    await lock.release();
    rmSync(t.blobsDir, { recursive: true, force: true });
    const missing = await cli(["inline-images", ...t.dirs, "--json"]);
    expect(missing.code).toBe(1);
    expect(missing.records.find((r) => r.type === "file")).toMatchObject({ status: "failed", code: "BLOB_MISSING" });
    expect(readFileSync(t.file, "utf8")).toBe(withRefs);
  });
});
