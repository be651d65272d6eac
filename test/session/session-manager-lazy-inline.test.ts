import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { collectGarbage } from "../../src/maintenance/gc.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

/** A v3 session written by another tool (pi): its images are inline, no blob exists for them. */
function writeInlineImageSession(path: string): { images: string[] } {
  const images = [makePng(40, 40, 1).toString("base64"), makePng(48, 40, 2).toString("base64")];
  const lines = [
    { type: "session", version: 3, id: "0190a5d2-0000-7000-8000-000000000001", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" },
    {
      type: "message",
      id: "a1",
      parentId: null,
      timestamp: "t",
      message: {
        role: "user",
        content: [
          { type: "text", text: "see" },
          { type: "image", data: images[0], mimeType: "image/png" },
        ],
      },
    },
    { type: "message", id: "a2", parentId: "a1", timestamp: "t", message: { role: "assistant", content: [{ type: "text", text: "ok" }] } },
    {
      type: "message",
      id: "a3",
      parentId: "a2",
      timestamp: "t",
      message: { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: images[1] } }] },
    },
  ];
  writeFileSync(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
  return { images };
}

/** Every path under `dir` with its size and mtime: "wrote nothing" means this does not change. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      const st = statSync(p);
      out.push(`${p} ${e.isDirectory() ? "dir" : st.size} ${st.mtimeMs}`);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

function imagesOf(value: unknown): string[] {
  const found: string[] = [];
  JSON.stringify(value, (key, v) => {
    if (key === "data" && typeof v === "string") found.push(v);
    return v;
  });
  return found;
}

describe("lazy opens of sessions with inline images", () => {
  it("memory never relies on a blob no file references: gc, then context and fork still have the images", async () => {
    const root = tempDir();
    const path = join(root, "sessions", "b", "s.jsonl");
    const blobsDir = join(root, "blobs");
    mkdirSync(join(root, "sessions", "b"), { recursive: true });
    const { images } = writeInlineImageSession(path);
    const warnings: StoreWarning[] = [];
    const m = await SessionManager.open(path, { root, rehydrate: "lazy", onWarning: (w) => warnings.push(w) });
    // memory holds refs only
    expect(imagesOf(m.getEntries()).every((d) => d.startsWith("blob:sha256:"))).toBe(true);
    // a gc with no grace period finds nothing memory depends on
    await collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir, graceMs: 0 });
    expect(imagesOf(m.buildContext({ rehydrate: true }).messages)).toEqual(images);
    const fork = await m.fork();
    await fork.close();
    await m.close();
    await collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir, graceMs: 0 });
    // the fork's file holds refs, and their blobs are stored
    const forkText = readFileSync(fork.sessionFile!, "utf8");
    expect(forkText).toContain("blob:sha256:");
    const reopened = await SessionManager.open(fork.sessionFile!, { root, readOnly: true, onWarning: (w) => warnings.push(w) });
    expect(imagesOf(reopened.getEntries())).toEqual(images);
    await reopened.close();
    expect(warnings.filter((w) => w.code === "BLOB_MISSING")).toEqual([]);
  });

  it("a lazy append after the open keeps working, and the original inline lines stay readable after a move", async () => {
    const root = tempDir();
    const path = join(root, "s.jsonl");
    const { images } = writeInlineImageSession(path);
    const m = await SessionManager.open(path, { root, rehydrate: "lazy" });
    m.appendMessage({ role: "user", content: "more" });
    await m.moveTo(join(root, "elsewhere", "deeper"));
    expect(imagesOf(m.buildContext({ rehydrate: true }).messages)).toEqual(images);
    await m.close();
  });
});

describe("readOnly writes nothing, anywhere", () => {
  for (const rehydrate of ["lazy", "eager"] as const) {
    it(`a ${rehydrate} read-only open of inline images leaves the store byte- and mtime-identical`, async () => {
      const root = tempDir();
      const path = join(root, "sessions", "s.jsonl");
      mkdirSync(join(root, "sessions"), { recursive: true });
      const { images } = writeInlineImageSession(path);
      const before = snapshot(root);
      const m = await SessionManager.open(path, { root, readOnly: true, rehydrate });
      expect(imagesOf(m.buildContext({ rehydrate: true }).messages)).toEqual(images);
      await m.close();
      expect(existsSync(join(root, "blobs"))).toBe(false);
      expect(snapshot(root)).toEqual(before);
    });
  }

  it("`show` and `export` of a session with inline images write nothing", async () => {
    const root = tempDir();
    const bucket = join(root, "sessions", "--p--");
    mkdirSync(bucket, { recursive: true });
    const path = join(bucket, "2026-01-01T00-00-00-000Z_0190a5d2-0000-7000-8000-000000000001.jsonl");
    const { images } = writeInlineImageSession(path);
    const before = snapshot(root);
    const shown = await cli(["show", "0190a5d2", "--root", root], { cwd: "/p" });
    expect(shown.code).toBe(0);
    const exported = await cli(["export", "0190a5d2", "--root", root], { cwd: "/p" });
    expect(exported.code).toBe(0);
    for (const image of images) expect(exported.stdout).toContain(image);
    // --refs keeps what the file holds: these images are inline there, no blob of them exists
    const withRefs = await cli(["export", "0190a5d2", "--refs", "--root", root], { cwd: "/p" });
    expect(withRefs.code, withRefs.stderr).toBe(0);
    for (const image of images) expect(withRefs.stdout).toContain(image);
    expect(withRefs.stdout).not.toContain("blob:sha256:");
    expect(snapshot(root)).toEqual(before);
  });
});
