import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { blobDirEntries } from "../support/blob-dir.ts";
import { sharedData } from "../support/shared-data.ts";
import { sha } from "../support/sha.ts";

/** The real pi v1 transcripts shared beside the repository (null: the tests that need them skip). */
const REAL = sharedData("real-sessions");

function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(p, sha(readFileSync(p)));
    }
  };
  walk(dir);
  return out;
}

/** A small legacy tree: the real pi v1 transcripts plus two v1 files sharing one inline image. */
function legacyTree(): { src: string; png: Buffer } {
  const src = tempDir("ts-cli-src-");
  for (const name of readdirSync(REAL!)) copyFileSync(join(REAL!, name), join(src, name));
  const png = makePng(64, 64, 5);
  for (const n of [1, 2]) {
    const lines = [
      { type: "session", id: `legacy-img-${n}`, timestamp: `2025-0${n}-01T00:00:00.000Z`, cwd: "/home/u/images" },
      {
        type: "message",
        timestamp: "t",
        message: {
          role: "user",
          content: [
            { type: "text", text: "see" },
            { type: "image", data: png.toString("base64"), mimeType: "image/png" },
          ],
        },
      },
      { type: "message", timestamp: "t", message: { role: "assistant", content: [{ type: "text", text: `reply ${n}` }] } },
    ];
    mkdirSync(join(src, "nested"), { recursive: true });
    writeFileSync(join(src, "nested", `img-${n}.jsonl`), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  }
  return { src, png };
}

describe("transcript-store migrate", () => {
  it.skipIf(REAL === null)("imports every file as v3 with deduplicated blobs and exact reports; a second run changes no byte", async () => {
    const { src, png } = legacyTree();
    const root = tempDir();
    const before = snapshot(src);
    const first = await cli(["migrate", src, "--root", root, "--json"]);
    expect(first.code).toBe(0);
    const files = first.records.filter((r) => r.type === "file");
    expect(files).toHaveLength(4);
    for (const f of files) {
      expect(f.status).toBe("imported");
      expect(f.bytesBefore).toBe(statSync(f.source).size);
      expect(f.bytesAfter).toBe(statSync(f.target).size);
      const m = await SessionManager.open(f.target, { root, readOnly: true });
      expect(m.header.version).toBe(3);
      expect(m.loadReport.migratedFrom).toBeNull();
      const fromSource = await SessionManager.open(f.source, { root, readOnly: true });
      expect(m.getEntries()).toEqual(
        fromSource
          .getEntries()
          .map((e) => JSON.parse(JSON.stringify(e, (k, v) => (k === "partialJson" || k === "jsonlEvents" ? undefined : v)))),
      );
    }
    const totals = first.records.find((r) => r.type === "totals")!;
    expect(totals).toMatchObject({ files: 4, migrated: 4, failed: 0, imagesExternalized: 2, blobsNew: 1, blobsDeduplicated: 1 });
    expect(blobDirEntries(join(root, "blobs"))).toEqual([sha(png)]);
    expect(snapshot(src)).toEqual(before); // sources untouched

    const storeBefore = snapshot(join(root, "sessions"));
    const second = await cli(["migrate", src, "--root", root, "--json"]);
    expect(second.code).toBe(0);
    expect(second.records.filter((r) => r.type === "file").map((r) => r.status)).toEqual(["current", "current", "current", "current"]);
    expect(snapshot(join(root, "sessions"))).toEqual(storeBefore);
  });

  it.skipIf(REAL === null)("--dry-run writes nothing; --in-place --backup keeps .bak and rewrites in place", async () => {
    const { src } = legacyTree();
    const root = tempDir();
    const before = snapshot(src);
    const dry = await cli(["migrate", src, "--root", root, "--dry-run", "--json"]);
    expect(dry.code).toBe(0);
    expect(dry.records.filter((r) => r.type === "file").every((r) => r.status === "planned")).toBe(true);
    expect(snapshot(src)).toEqual(before);
    expect(existsSync(join(root, "sessions"))).toBe(false);
    expect(existsSync(join(root, "blobs"))).toBe(false);

    const file = join(src, "nested", "img-1.jsonl");
    const original = readFileSync(file);
    const inPlace = await cli(["migrate", file, "--in-place", "--backup", "--blobs-dir", join(root, "blobs"), "--json"]);
    expect(inPlace.code).toBe(0);
    expect(readFileSync(`${file}.bak`).equals(original)).toBe(true);
    expect(JSON.parse(readFileSync(file, "utf8").split("\n")[0]!).version).toBe(3);
    expect(readFileSync(file, "utf8")).toContain("blob:sha256:");
    const again = await cli(["migrate", file, "--in-place", "--blobs-dir", join(root, "blobs"), "--json"]);
    expect(again.records[0]!.status).toBe("current");
  });

  it("quarantines a torn tail and a malformed line of a legacy file while migrating", async () => {
    const src = tempDir();
    const root = tempDir();
    const bad = '{"type":"message", broken';
    writeFileSync(
      join(src, "damaged.jsonl"),
      [
        '{"type":"session","id":"dmg","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"}',
        '{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}',
        bad,
        '{"type":"message","timestamp":"t","message":{"role":"assistant","content":"b"}}',
        '{"type":"mes',
      ].join("\n"),
    );
    const run = await cli(["migrate", src, "--root", root, "--json"]);
    expect(run.code).toBe(0);
    const report = run.records[0]!;
    expect(report).toMatchObject({ status: "imported", malformed: 1, tornTail: true, entries: 2 });
    const q = readFileSync(report.target.replace(/\.jsonl$/, ".quarantine.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l).text);
    expect(q).toEqual([bad, '{"type":"mes']);
    expect((await cli(["verify", report.target, "--root", root])).code).toBe(0);
  });

  it("reports a bad header as a failure (exit 1) and leaves the file alone", async () => {
    const src = tempDir();
    writeFileSync(join(src, "garbage.jsonl"), "garbage\n");
    const run = await cli(["migrate", src, "--root", tempDir(), "--json"]);
    expect(run.code).toBe(1);
    expect(run.records[0]).toMatchObject({ status: "failed", error: { code: "BAD_HEADER" } });
    expect(readFileSync(join(src, "garbage.jsonl"), "utf8")).toBe("garbage\n");
  });
});
