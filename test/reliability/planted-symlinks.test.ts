import {
  appendFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { quarantinePathOf } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

const OUTSIDE_BYTES = "precious file outside the store\n";

/** A file outside the store that a planted link points at. */
function outsideFile(): string {
  const path = join(tempDir("ts-outside-"), "precious.txt");
  writeFileSync(path, OUTSIDE_BYTES);
  return path;
}

describe("symlinks planted at a session's journal and quarantine names are never written through", () => {
  it("moveTo with a link at <stem>.move.json: MOVE_FAILED, the link's target untouched, the session unmoved", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "old"), { root });
    m.appendMessage({ role: "user", content: "hello" });
    const from = m.sessionFile!;
    const before = readFileSync(from);
    const target = outsideFile();
    symlinkSync(target, from.replace(/\.jsonl$/, ".move.json"));
    await expect(m.moveTo(join(root, "new"))).rejects.toMatchObject({ code: "MOVE_FAILED" });
    expect(readFileSync(target, "utf8")).toBe(OUTSIDE_BYTES);
    expect(readFileSync(from).equals(before)).toBe(true);
    const buckets = readdirSync(join(root, "sessions"));
    const leftovers = buckets.flatMap((b) => readdirSync(join(root, "sessions", b))).filter((n) => /\.(tmp|move-in\.json)$/.test(n));
    expect(leftovers).toEqual([]);
    m.appendMessage({ role: "assistant", content: "still here" });
    await m.close();
  });

  it("torn-tail repair with a link at <stem>.quarantine.jsonl: PERSISTENCE_FAILED, nothing written anywhere", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendMessage({ role: "user", content: "hello" });
    await m.close();
    const path = m.sessionFile!;
    appendFileSync(path, '{"type":"message","id":"torn"');
    const before = readFileSync(path);
    const target = outsideFile();
    symlinkSync(target, quarantinePathOf(path));
    await expect(SessionManager.open(path, { root })).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    expect(readFileSync(target, "utf8")).toBe(OUTSIDE_BYTES);
    expect(readFileSync(path).equals(before)).toBe(true);
    // a read-only open never repairs, so it still reads the session
    const ro = await SessionManager.open(path, { root, readOnly: true });
    expect(ro.getEntries()).toHaveLength(1);
    await ro.close();
    expect(existsSync(dirname(path))).toBe(true);
  });
});

describe("symlinks planted at the other names the engine writes are never written through", () => {
  const image = () => ({
    role: "user",
    content: [{ type: "image", data: Buffer.alloc(3000, 9).toString("base64"), mimeType: "image/png" }],
  });

  it("the session file itself: an append refuses (PERSISTENCE_FAILED) instead of writing through", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendMessage({ role: "user", content: "hello" });
    await m.close();
    // The link points at a valid session outside the store: reading it is harmless, writing is not.
    const target = join(tempDir("ts-outside-"), "victim.jsonl");
    const victim = `${JSON.stringify({ type: "session", version: 3, id: "victim", timestamp: "t", cwd: "/" })}\n`;
    writeFileSync(target, victim);
    const planted = join(dirname(m.sessionFile!), "2026-01-01T00-00-00-000Z_planted.jsonl");
    symlinkSync(target, planted);
    const opened = await SessionManager.open(planted, { root });
    expect(() => opened.appendMessage({ role: "assistant", content: "x" })).toThrow(
      expect.objectContaining({ code: "PERSISTENCE_FAILED" }),
    );
    await opened.close();
    expect(readFileSync(target, "utf8")).toBe(victim);
  });

  it("a bucket directory of the sessions tree: create and open refuse, nothing lands outside", async () => {
    const root = tempDir();
    const outside = tempDir("ts-outside-");
    const first = await SessionManager.create(join(root, "p"), { root });
    await first.close();
    const bucket = dirname(first.sessionFile!);
    renameSync(bucket, `${bucket}.real`);
    symlinkSync(outside, bucket);
    await expect(SessionManager.create(join(root, "p"), { root })).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    await expect(SessionManager.open(join(bucket, "x.jsonl"), { root })).rejects.toMatchObject({ code: "PERSISTENCE_FAILED" });
    expect(readdirSync(outside)).toEqual([]);
  });

  it("the lock declaration <file>.lock.json: replaced by a real file, the link's target untouched", async () => {
    const root = tempDir();
    const first = await SessionManager.create(join(root, "p"), { root });
    await first.close();
    const target = outsideFile();
    symlinkSync(target, `${first.sessionFile!}.lock.json`);
    const m = await SessionManager.open(first.sessionFile!, { root });
    m.appendMessage({ role: "user", content: "ok" });
    expect(JSON.parse(readFileSync(`${first.sessionFile!}.lock.json`, "utf8"))).toMatchObject({ pid: process.pid });
    await m.close();
    expect(readFileSync(target, "utf8")).toBe(OUTSIDE_BYTES);
  });

  it("the blob store's registry of referrers: an image append refuses, text appends go on", async () => {
    const root = tempDir();
    mkdirSync(join(root, "blobs"), { recursive: true });
    const target = outsideFile();
    symlinkSync(target, join(root, "blobs", ".referrers.jsonl"));
    const m = await SessionManager.create(join(root, "p"), { root });
    expect(() => m.appendMessage(image())).toThrow(expect.objectContaining({ code: "PERSISTENCE_FAILED" }));
    m.appendMessage({ role: "user", content: "text" });
    await m.close();
    expect(readFileSync(target, "utf8")).toBe(OUTSIDE_BYTES);
    expect(readdirSync(join(root, "blobs")).filter((n) => /^[0-9a-f]{64}$/.test(n))).toEqual([]);
  });

  it("a blob's final name: the link is replaced by the real bytes, its target untouched", async () => {
    const root = tempDir();
    const data = Buffer.alloc(3000, 9);
    const hash = sha(data);
    mkdirSync(join(root, "blobs"), { recursive: true });
    const target = outsideFile();
    symlinkSync(target, join(root, "blobs", hash));
    const m = await SessionManager.create(join(root, "p"), { root });
    m.appendMessage(image());
    await m.close();
    expect(readFileSync(target, "utf8")).toBe(OUTSIDE_BYTES);
    expect(lstatSync(join(root, "blobs", hash)).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(root, "blobs", hash)).equals(data)).toBe(true);
  });
});
