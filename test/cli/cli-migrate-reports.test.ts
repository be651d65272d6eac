import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/cli.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

const line = (o: unknown) => `${JSON.stringify(o)}\n`;

/** Three legacy v1 files, each with one inline image. */
function imageTree(): string {
  const src = tempDir("ts-reports-src-");
  mkdirSync(join(src, "nested"), { recursive: true });
  for (const n of [1, 2, 3]) {
    const png = makePng(16, 16, n);
    writeFileSync(
      join(src, "nested", `img-${n}.jsonl`),
      line({ type: "session", id: `rep-${n}`, timestamp: `2025-0${n}-01T00:00:00.000Z`, cwd: "/home/u/rep" }) +
        line({
          type: "message",
          timestamp: "t",
          message: { role: "user", content: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }] },
        }) +
        line({ type: "message", timestamp: "t", message: { role: "assistant", content: [{ type: "text", text: `reply ${n}` }] } }),
    );
  }
  return src;
}

const files = (r: { records: Array<Record<string, unknown>> }) => r.records.filter((x) => x.type === "file");
const totals = (r: { records: Array<Record<string, unknown>> }) => r.records.find((x) => x.type === "totals")!;

describe("migrate and verify reports say what happened", () => {
  it("a conflict is counted once, as a conflict, and still fails the run", async () => {
    const src = imageTree();
    const root = tempDir();
    const first = await cli(["migrate", src, "--root", root, "--json"]);
    expect(first.code).toBe(0);
    const f = files(first)[0]!;
    const more = (text: string, id: string) =>
      line({ type: "message", id, parentId: null, timestamp: "t", message: { role: "user", content: [{ type: "text", text }] } });
    appendFileSync(String(f.target), more("store side", "s1"));
    appendFileSync(
      String(f.source),
      line({ type: "message", timestamp: "t", message: { role: "user", content: [{ type: "text", text: "x" }] } }),
    );
    const second = await cli(["migrate", src, "--root", root, "--json"]);
    expect(
      files(second)
        .map((r) => r.status)
        .sort(),
    ).toEqual(["conflict", "current", "current"]);
    expect(totals(second)).toMatchObject({ files: 3, conflicts: 1, failed: 0 });
    expect(second.code).toBe(1);
  });

  it("a re-run that changes nothing externalizes no image", async () => {
    const src = imageTree();
    const root = tempDir();
    const real = await cli(["migrate", src, "--root", root, "--json"]);
    expect(totals(real)).toMatchObject({ migrated: 3, imagesExternalized: 3, blobsNew: 3 });
    const again = await cli(["migrate", src, "--root", root, "--json"]);
    expect(again.code).toBe(0);
    expect(files(again).map((r) => r.status)).toEqual(["current", "current", "current"]);
    expect(totals(again)).toMatchObject({ current: 3, imagesExternalized: 0, blobsNew: 0, blobsDeduplicated: 0 });
  });

  it("a dry run predicts the real run: sizes it writes, files it leaves unchanged", async () => {
    const src = imageTree();
    const root = tempDir();
    // A fourth file holding the first file's image: the real run deduplicates it, so must the prediction.
    const copy = readFileSync(join(src, "nested", "img-1.jsonl"), "utf8").replace('"rep-1"', '"rep-4"');
    writeFileSync(join(src, "nested", "img-4.jsonl"), copy);
    const dry = await cli(["migrate", src, "--root", root, "--dry-run", "--json"]);
    expect(dry.code).toBe(0);
    expect(existsSync(join(root, "sessions"))).toBe(false);
    expect(existsSync(join(root, "blobs"))).toBe(false);
    const real = await cli(["migrate", src, "--root", root, "--json"]);
    expect(real.code).toBe(0);
    const after = new Map(files(real).map((r) => [r.source, r.bytesAfter]));
    for (const r of files(dry)) {
      expect(r.status).toBe("planned");
      expect(r.bytesAfter).toBe(after.get(r.source));
    }
    expect(totals(real)).toMatchObject({ migrated: 4, imagesExternalized: 4, blobsNew: 3, blobsDeduplicated: 1 });
    expect(totals(dry)).toMatchObject({ planned: 4, imagesExternalized: 4, blobsNew: 3, blobsDeduplicated: 1 });
    const dryAgain = await cli(["migrate", src, "--root", root, "--dry-run", "--json"]);
    expect(files(dryAgain).map((r) => r.status)).toEqual(["current", "current", "current", "current"]);
    expect(totals(dryAgain)).toMatchObject({ current: 4, planned: 0, imagesExternalized: 0, blobsNew: 0 });
  });

  it("verify reports the glued lines that migrate then splits", async () => {
    const src = tempDir();
    const root = tempDir();
    const a = { type: "message", timestamp: "t", message: { role: "user", content: [{ type: "text", text: "a" }] } };
    const b = { type: "message", timestamp: "t", message: { role: "assistant", content: [{ type: "text", text: "b" }] } };
    const file = join(src, "glued.jsonl");
    writeFileSync(
      file,
      line({ type: "session", id: "glued", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/g" }) +
        `${JSON.stringify(a)}${JSON.stringify(b)}\n`,
    );
    const verify = await cli(["verify", file, "--root", root, "--json"]);
    const findings = verify.records.filter((r) => r.type === "finding");
    expect(findings).toMatchObject([{ kind: "GLUED_LINE", path: file, line: 2 }]);
    expect(verify.code).toBe(1);
    const migrate = await cli(["migrate", file, "--root", root, "--json"]);
    expect(files(migrate)[0]).toMatchObject({ status: "imported", linesSplit: 1 });
  });
});
