import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readReferrers } from "../../../src/blob/blob-referrers.ts";
import type { StoreWarning } from "../../../src/errors.ts";
import { SessionManager } from "../../../src/session/session-manager.ts";
import type { SessionManagerOptions } from "../../../src/session/session-options.ts";
import { fileBackend } from "../../../src/storage/file/file-backend.ts";
import { forkCopyStats } from "../../../src/storage/file/fork-copy.ts";
import { injectFault } from "../../support/fault.ts";
import { makePng } from "../../support/png.ts";
import { tempDir } from "../../support/temp-dir.ts";
import {
  cleanSource,
  copiedDamage,
  entryLine,
  fallbackSources,
  inlineImageSource,
  lastId,
  refusedSources,
} from "./helpers/fork-sources.ts";

afterEach(() => vi.restoreAllMocks());

function headerOf(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, "utf8").split("\n")[0]!);
}

function bodyOf(path: string): Buffer {
  const bytes = readFileSync(path);
  return bytes.subarray(bytes.indexOf(0x0a) + 1);
}

/** The header without what differs between any two forks (their own id and creation time). */
function headerShape(path: string): Record<string, unknown> {
  const { id: _id, timestamp: _ts, ...rest } = headerOf(path);
  return rest;
}

/** What forkFrom did before the byte copy: open the source read-only, fork it, close it. */
async function openAndFork(source: string, cwd: string, options: SessionManagerOptions): Promise<SessionManager> {
  const opened = await SessionManager.open(source, { ...options, readOnly: true });
  try {
    return await opened.fork({ cwd });
  } finally {
    await opened.close();
  }
}

/** Runs `work` counting the JSON.parse calls it makes. */
async function countingParses<T>(work: () => Promise<T> | T): Promise<{ value: T; parses: number }> {
  const spy = vi.spyOn(JSON, "parse");
  try {
    const before = spy.mock.calls.length;
    const value = await work();
    return { value, parses: spy.mock.calls.length - before };
  } finally {
    spy.mockRestore();
  }
}

describe("forkFrom of a clean session file (byte copy)", () => {
  it.each(["eager", "lazy"] as const)("gives the bytes and entries of opening and forking the source (%s)", async (rehydrate) => {
    const root = tempDir();
    const source = await cleanSource(root);
    const options = { root, rehydrate };
    const copies = forkCopyStats.copies;
    const fast = await SessionManager.forkFrom(source, join(root, "elsewhere"), options);
    expect(forkCopyStats.copies).toBe(copies + 1);
    const today = await openAndFork(source, join(root, "elsewhere"), options);
    expect(bodyOf(fast.sessionFile!)).toEqual(bodyOf(today.sessionFile!));
    expect(bodyOf(fast.sessionFile!)).toEqual(bodyOf(source));
    expect(headerShape(fast.sessionFile!)).toEqual(headerShape(today.sessionFile!));
    expect(fast.header.parentSession).toBe(headerOf(source).id);
    expect(fast.getEntries()).toEqual(today.getEntries());
    expect(fast.getLeafId()).toBe(today.getLeafId());
    expect(fast.buildContext()).toEqual(today.buildContext());
    expect(fast.loadReport).toEqual(today.loadReport);
    await fast.close();
    await today.close();
  });

  it("reads no entry of the source: the fork's own file is read on first need", async () => {
    const root = tempDir();
    const source = await cleanSource(root);
    for (let i = 0; i < 200; i++) appendFileSync(source, entryLine(`n${i}`, i === 0 ? lastId(source) : `n${i - 1}`, `line ${i}`));
    const { value: fork, parses } = await countingParses(() => SessionManager.forkFrom(source, join(root, "elsewhere"), { root }));
    expect(parses).toBeLessThan(10); // the source's header and the lock's bookkeeping, not 204 entries
    const { value: entries, parses: onRead } = await countingParses(() => fork.getEntries());
    expect(onRead).toBeGreaterThanOrEqual(204);
    expect(entries).toHaveLength(204);
    expect(entries[203]!.id).toBe("n199");
    await fork.close();
  });

  it.each([3, 7, 64])("checks lines across chunk boundaries (chunks of %s bytes)", async (chunkSize) => {
    const root = tempDir();
    const source = await cleanSource(root);
    const { copies, fallbacks } = forkCopyStats;
    const fork = await SessionManager.forkFrom(source, join(root, "elsewhere"), { root, chunkSize });
    expect(forkCopyStats).toEqual({ copies: copies + 1, fallbacks });
    expect(bodyOf(fork.sessionFile!)).toEqual(bodyOf(source));
    await fork.close();
    appendFileSync(source, "  {\n"); // a short line, wherever the chunks end
    const again = await SessionManager.forkFrom(source, join(root, "elsewhere"), { root, chunkSize, onWarning: () => {} });
    expect(forkCopyStats).toEqual({ copies: copies + 1, fallbacks: fallbacks + 1 });
    await again.close();
  });

  it("a fork closed before it was read is never rewritten: its copy stays, its entries are still read", async () => {
    const root = tempDir();
    const source = await cleanSource(root);
    copiedDamage["a malformed line"]!(source);
    const fork = await SessionManager.forkFrom(source, join(root, "elsewhere"), { root, onWarning: () => {} });
    await fork.close();
    const today = await openAndFork(source, join(root, "elsewhere"), { root, onWarning: () => {} });
    expect(fork.getEntries()).toEqual(today.getEntries());
    expect(bodyOf(fork.sessionFile!)).toEqual(bodyOf(source));
    await today.close();
  });

  it("closes without reading its entries, leaving the copy", async () => {
    const root = tempDir();
    const source = await cleanSource(root);
    const fork = await SessionManager.forkFrom(source, join(root, "elsewhere"), { root });
    const path = fork.sessionFile!;
    const { parses } = await countingParses(() => fork.close());
    expect(parses).toBeLessThan(3);
    expect(bodyOf(path)).toEqual(bodyOf(source));
  });

  it("appends after the source's last entry, under the fork's own lock", async () => {
    const root = tempDir();
    const source = await cleanSource(root);
    const fork = await SessionManager.forkFrom(source, join(root, "elsewhere"), { root });
    await expect(SessionManager.open(fork.sessionFile!, { root })).rejects.toMatchObject({ code: "SESSION_LOCKED" });
    const id = fork.appendMessage({ role: "user", content: "after the fork" });
    expect(fork.getEntry(id)!.parentId).toBe(lastId(source));
    const path = fork.sessionFile!;
    await fork.close();
    const reopened = await SessionManager.open(path, { root });
    expect(reopened.getEntries().at(-1)).toMatchObject({ id, parentId: lastId(source) });
    expect(reopened.loadReport.malformed).toEqual([]);
    await reopened.close();
  });

  it("forks and moves a fork it has not read yet", async () => {
    const root = tempDir();
    const source = await cleanSource(root);
    const fork = await SessionManager.forkFrom(source, join(root, "elsewhere"), { root });
    const again = await fork.fork();
    expect(bodyOf(again.sessionFile!)).toEqual(bodyOf(source));
    expect(again.header.parentSession).toBe(fork.sessionId);
    await again.close();
    const other = await SessionManager.forkFrom(source, join(root, "elsewhere"), { root });
    await other.moveTo(join(root, "moved"));
    expect(bodyOf(other.sessionFile!)).toEqual(bodyOf(source));
    expect(other.getEntries().map((e) => e.id)).toEqual(fork.getEntries().map((e) => e.id));
    await other.close();
    await fork.close();
  });

  it("copies only the lines the source had when its length was read, while a writer appends", async () => {
    const root = tempDir();
    const source = await cleanSource(root);
    const before = bodyOf(source);
    let appended = 0;
    // Every read of the source appends one more entry to it (a live writer racing the copy).
    const restore = injectFault("readSync", () => {
      if (appended < 3) appendFileSync(source, entryLine(`late${appended++}`, null, "written during the copy"));
      return undefined;
    });
    let fork: SessionManager;
    try {
      fork = await SessionManager.forkFrom(source, join(root, "elsewhere"), { root });
    } finally {
      restore();
    }
    expect(appended).toBe(3);
    expect(bodyOf(fork.sessionFile!)).toEqual(before);
    expect(fork.getEntries().map((e) => e.id)).not.toContain("late0");
    await fork.close();
  });

  it("keeps blob refs that resolve in the fork, and hard-links the artifacts", async () => {
    const root = tempDir();
    const source = await cleanSource(root);
    const artifacts = source.replace(/\.jsonl$/, "");
    mkdirSync(artifacts);
    writeFileSync(join(artifacts, "1.bash.log"), "output");
    const fork = await SessionManager.forkFrom(source, join(root, "elsewhere"), { root });
    expect(readFileSync(fork.sessionFile!, "utf8")).toContain("blob:sha256:");
    const image = fork.getEntries()[2]!.message as { content: { data: string }[] };
    expect(image.content[0]!.data).toMatch(/^iVBOR/); // rehydrated from the store both share
    expect(statSync(join(fork.artifactsDir!, "1.bash.log")).ino).toBe(statSync(join(artifacts, "1.bash.log")).ino);
    await fork.close();
  });
});

describe("forkFrom's byte copy and the blob store", () => {
  /** A source with blob refs (or none) in store A, forked into sessions tree B that shares A's blobs. */
  async function forkIntoOtherTree(withImage: boolean, chunkSize?: number) {
    const a = tempDir();
    const b = tempDir();
    const source = withImage ? await cleanSource(a) : join(a, "plain.jsonl");
    if (!withImage)
      writeFileSync(
        source,
        `${JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: "t", cwd: "/p" })}\n${entryLine("e1", null, "text")}`,
      );
    const blobsDir = join(a, "blobs");
    const options = { sessionsDir: join(b, "sessions"), blobsDir, ...(chunkSize === undefined ? {} : { chunkSize }) };
    const before = readReferrers(blobsDir) ?? [];
    const fork = await SessionManager.forkFrom(source, join(b, "proj"), options);
    return { fork, source, before, after: readReferrers(blobsDir) ?? [], tree: join(b, "sessions"), blobsDir };
  }

  it.each([undefined, 5, 13])(
    "registers the fork's tree before the copy of lines naming blobs lands (chunks of %s bytes)",
    async (chunkSize) => {
      const { fork, source, before, after, tree } = await forkIntoOtherTree(true, chunkSize);
      expect(before.map((r) => r.path)).not.toContain(tree);
      expect(after).toContainEqual({ kind: "tree", path: tree });
      expect(bodyOf(fork.sessionFile!)).toEqual(bodyOf(source));
      await fork.close();
    },
  );

  it("creates no blob store for copied refs when there is none (no blob they could name exists)", async () => {
    const a = tempDir();
    const source = await cleanSource(a);
    const b = tempDir();
    const fork = await SessionManager.forkFrom(source, join(b, "proj"), { root: b, onWarning: () => {} });
    expect(bodyOf(fork.sessionFile!)).toEqual(bodyOf(source));
    expect(existsSync(join(b, "blobs"))).toBe(false);
    fork.appendMessage({ role: "user", content: [{ type: "image", data: makePng(30, 30, 9).toString("base64"), mimeType: "image/png" }] });
    expect(readReferrers(join(b, "blobs"))).toContainEqual({ kind: "tree", path: join(b, "sessions") });
    await fork.close();
  });

  it("leaves the blob store alone when no copied line names a blob, until an append stores one", async () => {
    const { fork, before, after, tree, blobsDir } = await forkIntoOtherTree(false);
    expect(after).toEqual(before);
    fork.appendMessage({ role: "user", content: [{ type: "image", data: makePng(30, 30, 9).toString("base64"), mimeType: "image/png" }] });
    expect(readReferrers(blobsDir)).toContainEqual({ kind: "tree", path: tree });
    await fork.close();
  });
});

describe("forkFrom of a source whose lines memory would not hold verbatim", () => {
  for (const [name, damage] of Object.entries(copiedDamage)) {
    it(`copies it, then rewrites the fork from memory as opening and forking it does: ${name}`, async () => {
      const root = tempDir();
      const source = await cleanSource(root);
      damage(source);
      const sourceBytes = readFileSync(source);
      const fastWarnings: StoreWarning[] = [];
      const todayWarnings: StoreWarning[] = [];
      const copies = forkCopyStats.copies;
      const fast = await SessionManager.forkFrom(source, join(root, "elsewhere"), { root, onWarning: (w) => fastWarnings.push(w) });
      expect(forkCopyStats.copies).toBe(copies + 1);
      expect(bodyOf(fast.sessionFile!)).toEqual(bodyOf(source)); // the copy, until first read
      const today = await openAndFork(source, join(root, "elsewhere"), { root, onWarning: (w) => todayWarnings.push(w) });
      expect(fast.getEntries()).toEqual(today.getEntries());
      expect(bodyOf(fast.sessionFile!)).toEqual(bodyOf(today.sessionFile!));
      expect(bodyOf(fast.sessionFile!)).not.toEqual(bodyOf(source));
      expect(headerShape(fast.sessionFile!)).toEqual(headerShape(today.sessionFile!));
      expect(fastWarnings).toEqual(todayWarnings); // same codes, messages and path (the source's)
      expect(todayWarnings.length).toBeGreaterThan(0);
      const id = fast.appendMessage({ role: "user", content: "next" });
      expect(fast.getEntry(id)!.parentId).toBe(today.getLeafId());
      expect(readFileSync(source)).toEqual(sourceBytes);
      await fast.close();
      await today.close();
    });
  }

  it("a lazy fork of a source with inline images stores them and rewrites its file as opening and forking it does", async () => {
    const root = tempDir();
    mkdirSync(join(root, "sessions"), { recursive: true });
    const source = join(root, "sessions", "pi.jsonl");
    inlineImageSource(source);
    const options = { root, rehydrate: "lazy" as const };
    const fast = await SessionManager.forkFrom(source, join(root, "elsewhere"), options);
    expect(bodyOf(fast.sessionFile!)).toEqual(bodyOf(source));
    const today = await openAndFork(source, join(root, "elsewhere"), options);
    expect(fast.getEntries()).toEqual(today.getEntries());
    expect(bodyOf(fast.sessionFile!)).toEqual(bodyOf(today.sessionFile!));
    expect(readFileSync(fast.sessionFile!, "utf8")).toContain("blob:sha256:");
    expect(fast.rehydrate(fast.getEntries()[0])).toEqual(today.rehydrate(today.getEntries()[0]));
    await fast.close();
    await today.close();
  });
});

describe("forkFrom falls back to opening the source when a copy cannot promise the same fork", () => {
  for (const [name, shape] of Object.entries(fallbackSources)) {
    it(`${name}: no copy is kept, the fork is the one opening and forking gives`, async () => {
      const root = tempDir();
      const source = await cleanSource(root);
      shape(source);
      const { copies, fallbacks } = forkCopyStats;
      const fork = await SessionManager.forkFrom(source, join(root, "elsewhere"), { root, onWarning: () => {} });
      expect(forkCopyStats).toEqual({ copies, fallbacks: fallbacks + 1 });
      const today = await openAndFork(source, join(root, "elsewhere"), { root, onWarning: () => {} });
      expect(bodyOf(fork.sessionFile!)).toEqual(bodyOf(today.sessionFile!));
      expect(headerShape(fork.sessionFile!)).toEqual(headerShape(today.sessionFile!));
      expect(fork.getEntries()).toEqual(today.getEntries());
      await fork.close();
      await today.close();
    });
  }

  for (const [name, { write, code }] of Object.entries(refusedSources)) {
    it(`${name}: the same error as opening it (${code}), and nothing created`, async () => {
      const root = tempDir();
      mkdirSync(join(root, "sessions"), { recursive: true });
      const source = join(root, "sessions", "odd.jsonl");
      write(source);
      const bytes = readFileSync(source);
      await expect(SessionManager.open(source, { root, readOnly: true })).rejects.toMatchObject({ code });
      await expect(SessionManager.forkFrom(source, join(root, "elsewhere"), { root })).rejects.toMatchObject({ code });
      expect(readFileSync(source)).toEqual(bytes);
      expect(await SessionManager.list(join(root, "elsewhere"), { root })).toEqual([]);
    });
  }

  it("a missing source is SESSION_NOT_FOUND", async () => {
    const root = tempDir();
    await expect(SessionManager.forkFrom(join(root, "none.jsonl"), root, { root })).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  });

  it("a source reached through a symbolic link is read through it, as opening it does", async () => {
    const root = tempDir();
    const source = await cleanSource(root);
    const link = join(root, "link.jsonl");
    symlinkSync(source, link);
    const fallbacks = forkCopyStats.fallbacks;
    const fork = await SessionManager.forkFrom(link, join(root, "elsewhere"), { root });
    expect(forkCopyStats.fallbacks).toBe(fallbacks + 1);
    const today = await openAndFork(link, join(root, "elsewhere"), { root });
    expect(bodyOf(fork.sessionFile!)).toEqual(bodyOf(today.sessionFile!));
    await fork.close();
    await today.close();
  });

  it("a source that cannot be read while copying: no copy is left, the open path decides", async () => {
    const root = tempDir();
    const source = await cleanSource(root);
    let reads = 0;
    // The head reads succeed; the first read of the body fails, once.
    const restore = injectFault("readSync", (_call, args) =>
      typeof args[4] === "number" && args[4] > 0 && reads++ === 0 ? "EIO" : undefined,
    );
    let fork: SessionManager;
    const fallbacks = forkCopyStats.fallbacks;
    try {
      fork = await SessionManager.forkFrom(source, join(root, "elsewhere"), { root });
    } finally {
      restore();
    }
    expect(forkCopyStats.fallbacks).toBe(fallbacks + 1);
    expect(bodyOf(fork.sessionFile!)).toEqual(bodyOf(source));
    expect(await SessionManager.list(join(root, "elsewhere"), { root })).toHaveLength(1);
    await fork.close();
  });

  it("a fork of a branch (atEntryId) or through a backend without a byte copy opens the source", async () => {
    const root = tempDir();
    const source = await cleanSource(root);
    const copies = forkCopyStats.copies;
    const branch = await SessionManager.forkFrom(source, join(root, "b"), { root, atEntryId: lastId(source) });
    expect(branch.getEntries().map((e) => e.parentId)).toEqual([null, expect.any(String)]);
    const store = { ...fileBackend, forkWhole: undefined };
    const whole = await SessionManager.forkFrom(source, join(root, "w"), { root, store });
    expect(bodyOf(whole.sessionFile!)).toEqual(bodyOf(source));
    expect(forkCopyStats.copies).toBe(copies);
    expect(existsSync(whole.sessionFile!)).toBe(true);
    await branch.close();
    await whole.close();
  });
});
