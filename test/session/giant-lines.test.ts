import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cwdBucket } from "../../src/session/paths.ts";
import { scanLimits } from "../../src/session/session-file-reader.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

const LIMIT = 4096;
const saved = { ...scanLimits };
afterEach(() => Object.assign(scanLimits, saved));

const ID = "0190aaaa-0000-7000-8000-000000000002";
const header = (cwd: string) => JSON.stringify({ type: "session", version: 3, id: ID, timestamp: "2025-01-01T00:00:00.000Z", cwd });
const message = (id: string, parentId: string | null, content: unknown) =>
  JSON.stringify({ type: "message", id, parentId, timestamp: "2025-01-01T00:00:01.000Z", message: { role: "user", content } });

function writeSession(root: string, giant: string): string {
  const cwd = join(root, "p");
  mkdirSync(join(root, "sessions", cwdBucket(cwd)), { recursive: true });
  const path = join(root, "sessions", cwdBucket(cwd), `2025-01-01T00-00-00-000Z_${ID}.jsonl`);
  writeFileSync(path, [header(cwd), message("a1", null, "first"), giant, message("a3", "a2", "third"), ""].join("\n"));
  return path;
}

const png = makePng(200, 200, 7);

describe("a too-large line holding one giant image", () => {
  it.each(["eager", "lazy"] as const)(
    "is streamed to the blob store on a writable open and rewritten with its ref (%s)",
    async (rehydrate) => {
      scanLimits.maxLineBytes = LIMIT;
      const root = tempDir();
      const data = png.toString("base64");
      expect(data.length).toBeGreaterThan(4 * LIMIT);
      const path = writeSession(
        root,
        message("a2", "a1", [
          { type: "text", text: "look" },
          { type: "image", data, mimeType: "image/png" },
        ]),
      );
      const before = readFileSync(path, "utf8");
      // read-only: reported, nothing written
      const ro = await SessionManager.open(path, { root, readOnly: true });
      expect(ro.loadReport.malformed.map((m) => m.reason)).toEqual([expect.stringMatching(/^line too large/)]);
      await ro.close();
      expect(readFileSync(path, "utf8")).toBe(before);
      const m = await SessionManager.open(path, { root, rehydrate });
      expect(m.loadReport.malformed).toEqual([]);
      expect(m.getEntries().map((e) => e.id)).toEqual(["a1", "a2", "a3"]);
      const content = (m.getEntry("a2") as unknown as { message: { content: Array<{ data?: string }> } }).message.content;
      expect(content[1]!.data).toBe(rehydrate === "eager" ? data : `blob:sha256:${sha(png)}`);
      await m.close();
      const lines = readFileSync(path, "utf8").split("\n");
      expect(lines[2]).toBe(
        message("a2", "a1", [
          { type: "text", text: "look" },
          { type: "image", data: `blob:sha256:${sha(png)}`, mimeType: "image/png" },
        ]),
      );
      expect([lines[0], lines[1], lines[3]]).toEqual(before.split("\n").filter((_, i) => i !== 2 && i < 4));
      expect(readFileSync(join(root, "blobs", sha(png))).equals(png)).toBe(true);
      expect(readdirSync(join(root, "blobs")).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    },
  );

  it("a data URL (image_url) is stored as the URL's bytes", async () => {
    scanLimits.maxLineBytes = LIMIT;
    const root = tempDir();
    const url = `data:image/png;base64,${png.toString("base64")}`;
    const path = writeSession(root, message("a2", "a1", [{ type: "image_url", image_url: { url } }]));
    const m = await SessionManager.open(path, { root, rehydrate: "lazy" });
    expect(m.loadReport.malformed).toEqual([]);
    await m.close();
    const ref = `blob:sha256:${sha(Buffer.from(url))}`;
    expect(readFileSync(path, "utf8").split("\n")[2]).toBe(message("a2", "a1", [{ type: "image_url", image_url: { url: ref } }]));
    expect(readFileSync(join(root, "blobs", sha(Buffer.from(url))), "utf8")).toBe(url);
  });

  it.each([
    ["giant text", () => message("a2", "a1", "x".repeat(5 * LIMIT))],
    ["base64 that is not an image payload", () => message("a2", "a1", [{ type: "text", text: png.toString("base64") }])],
    [
      "non-canonical base64",
      () => message("a2", "a1", [{ type: "image", data: `${png.toString("base64").replace(/=+$/, "")}A`, mimeType: "image/png" }]),
    ],
    [
      "an image with too much JSON around it",
      () => message("a2", "a1", [{ type: "image", data: png.toString("base64"), mimeType: "image/png", pad: "y".repeat(2 * LIMIT) }]),
    ],
    [
      "base64 after an escaped quote in a text, beside an image slot reading as the placeholder through escapes",
      () =>
        message("a2", "a1", [
          { type: "image", data: "FAKE", mimeType: "image/png" },
          { type: "text", text: `"${png.toString("base64")}` },
        ]).replace("FAKE", `blob:sha256:${"\\u0030".repeat(64)}`),
    ],
  ])("%s stays a reported problem, the file untouched, no blob left", async (_name, make) => {
    scanLimits.maxLineBytes = LIMIT;
    scanLimits.keepBytes = 2 * LIMIT;
    const root = tempDir();
    const path = writeSession(root, make());
    const before = readFileSync(path);
    const m = await SessionManager.open(path, { root });
    expect(m.loadReport.malformed.map((p) => p.reason)).toEqual([expect.stringMatching(/^line too large/)]);
    await m.close();
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(existsSync(join(root, "blobs")) ? readdirSync(join(root, "blobs")) : []).toEqual([]);
  });

  it("a real image past V8's string limit opens: the image streams to the blob store, eager keeps the ref", async () => {
    const root = tempDir();
    const path = writeSession(root, message("a2", "a1", "small"));
    const lines = readFileSync(path, "utf8").split("\n");
    // ~540 MiB of base64 ("A" decodes to zero bytes), written in pieces, never as one string
    const quanta = 135 * 1024 * 1024 + 1;
    const prefix =
      `{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","co` +
      `ntent":[{"type":"image","data":"`;
    const fd = openSync(path, "w");
    writeSync(fd, `${lines[0]}\n${lines[1]}\n${prefix}`);
    const piece = Buffer.alloc(4 * 1024 * 1024, "A");
    const hash = createHash("sha256");
    const zeros = Buffer.alloc(3 * 1024 * 1024);
    for (let left = quanta; left > 0; ) {
      const n = Math.min(left, 1024 * 1024);
      writeSync(fd, piece, 0, n * 4);
      hash.update(zeros.subarray(0, n * 3));
      left -= n;
    }
    writeSync(fd, `","mimeType":"image/png"}]}}\n${lines[3]}\n`);
    closeSync(fd);
    const digest = hash.digest("hex");
    const warnings: string[] = [];
    const m = await SessionManager.continueRecent(join(root, "p"), { root, onWarning: (w) => warnings.push(w.code) });
    expect(m.loadReport.malformed).toEqual([]);
    expect(m.getEntries().map((e) => e.id)).toEqual(["a1", "a2", "a3"]);
    expect(warnings).toContain("IMAGE_TOO_LARGE");
    await m.close();
    expect(readFileSync(path, "utf8").split("\n")[2]).toBe(`${prefix}blob:sha256:${digest}","mimeType":"image/png"}]}}`);
  }, 120_000);
});
