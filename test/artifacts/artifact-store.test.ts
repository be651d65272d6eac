import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import type { StoreWarning } from "../../src/errors.ts";
import { linkTree } from "../../src/session/artifact-dir-copy.ts";
import { injectFault } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";
import { codeOf } from "../support/error-code.ts";

function storeIn(root: string, options: ConstructorParameters<typeof ArtifactStore>[1] = {}) {
  return new ArtifactStore(join(root, "2026-01-01T00-00-00-000Z_abc"), { now: () => 1_000, ...options });
}

describe("ArtifactStore ids and files", () => {
  it("creates no directory until the first write, then 0700 with 0600 files", () => {
    const store = storeIn(tempDir("ts-art-"));
    expect(store.list()).toEqual([]);
    expect(store.get("0")).toBeNull();
    expect(store.stats()).toEqual({ artifactCount: 0, totalBytes: 0 });
    expect(existsSync(store.dir)).toBe(false);
    const ref = store.save("hello", { toolType: "bash" });
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    for (const name of readdirSync(store.dir)) expect(statSync(join(store.dir, name)).mode & 0o777, name).toBe(0o600);
    expect(readFileSync(ref.path, "utf8")).toBe("hello");
    expect(ref.path).toBe(join(store.dir, "0.bash.log"));
  });

  it("numbers artifacts 0, 1, 2 and a reopened store continues after the highest id (acceptance 1)", () => {
    const root = tempDir("ts-art-");
    const first = storeIn(root);
    expect([0, 1, 2, 3, 4].map((i) => first.save(`content ${i}`, { toolType: "bash" }).id)).toEqual(["0", "1", "2", "3", "4"]);
    const reopened = storeIn(root);
    expect(reopened.save("six", { toolType: "python" }).id).toBe("5");
    expect(reopened.allocate("bash").id).toBe("6");
    expect(reopened.get("2")).toBe("content 2");
  });

  it("continues after content files written by another tool (omp layout, no metadata)", () => {
    const root = tempDir("ts-art-");
    const store = storeIn(root);
    mkdirSync(store.dir, { recursive: true });
    writeFileSync(join(store.dir, "7.bash.log"), "line one\nline two\n");
    expect(store.get("7")).toBe("line one\nline two\n");
    const ref = store.getRef("artifact://7")!;
    expect(ref).toMatchObject({ id: "7", toolType: "bash", summary: "line one line two ", sizeBytes: 18, contentType: "text/plain" });
    expect(store.save("next", { toolType: "bash" }).id).toBe("8");
  });

  it("returns its ref and persists every metadata field (docs/artifacts.md)", () => {
    const root = tempDir("ts-art-");
    const store = storeIn(root, { now: () => 5_000 });
    const ref = store.save("first line\r\nsecond\nthird", { toolType: "web.fetch", name: "page", ttlMs: 60_000, contentType: "text/html" });
    expect(ref).toEqual({
      id: "0",
      uri: "artifact://0",
      path: join(store.dir, "0.tool.log"),
      toolType: "tool",
      name: "page",
      summary: "first line second third",
      sizeBytes: 24,
      createdAt: 5_000,
      expiresAt: 65_000,
      contentType: "text/html",
    });
    expect(storeIn(root, { now: () => 6_000 }).getRef("page")).toEqual(ref);
  });

  it("cuts the default summary at 200 characters without splitting a surrogate pair", () => {
    const store = storeIn(tempDir("ts-art-"));
    const text = `${"a".repeat(199)}😀${"b".repeat(50)}`;
    expect(store.save(text, { toolType: "t" }).summary).toBe("a".repeat(199));
    expect(store.save("x\n".repeat(300), { toolType: "t" }).summary).toBe("x ".repeat(100));
    expect(store.save("anything", { toolType: "t", summary: "given" }).summary).toBe("given");
  });

  it("gives strings, JSON values and bytes back as they were saved", () => {
    const root = tempDir("ts-art-");
    const store = storeIn(root);
    const value = { rows: [1, 2, 3], nested: { ok: true, text: "é" } };
    store.save(value, { toolType: "sql" });
    store.save(Buffer.from([0, 255, 1]), { toolType: "bin" });
    store.save("plain", { toolType: "bash" });
    const reopened = storeIn(root);
    expect(reopened.get("0")).toEqual(value);
    expect(reopened.getRef("0")!.contentType).toBe("application/json");
    expect(reopened.get("1")).toEqual(Buffer.from([0, 255, 1]));
    expect(reopened.getRef("1")!.contentType).toBe("application/octet-stream");
    expect(reopened.get("2")).toBe("plain");
    expect(reopened.getText("0")).toBe(JSON.stringify(value));
  });

  it("treats names as aliases: the newest artifact with a name wins, lists never double", () => {
    const store = storeIn(tempDir("ts-art-"));
    store.save("v1", { toolType: "t", name: "report" });
    store.save("other", { toolType: "t" });
    store.save("v2", { toolType: "t", name: "report" });
    expect(store.get("report")).toBe("v2");
    expect(store.getRef("report")!.id).toBe("2");
    expect(store.list().map((r) => r.id)).toEqual(["0", "1", "2"]);
    expect(store.get("nobody")).toBeNull();
    expect(codeOf(() => store.save("x", { toolType: "t", name: "12" }))).toBe("INVALID_OPTION");
    expect(codeOf(() => store.save("x", { toolType: "t", name: "artifact://1" }))).toBe("INVALID_OPTION");
    expect(codeOf(() => store.save("x", { toolType: "t", name: "" }))).toBe("INVALID_OPTION");
  });

  it("validates options: ttlMs, contentType, the clock, unserializable values", () => {
    const root = tempDir("ts-art-");
    const store = storeIn(root);
    expect(codeOf(() => store.save("x", { toolType: "t", ttlMs: 0 }))).toBe("INVALID_OPTION");
    expect(codeOf(() => store.save("x", { toolType: "t", ttlMs: Number.NaN }))).toBe("INVALID_OPTION");
    expect(codeOf(() => store.save("x", { toolType: "t", contentType: "" }))).toBe("INVALID_OPTION");
    expect(codeOf(() => new ArtifactStore(root, { now: 5 as unknown as () => number }))).toBe("INVALID_OPTION");
    expect(codeOf(() => new ArtifactStore(""))).toBe("INVALID_OPTION");
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(codeOf(() => store.save(circular, { toolType: "t" }))).toBe("INVALID_OPTION");
    expect(codeOf(() => store.save(10n, { toolType: "t" }))).toBe("INVALID_OPTION");
    // nothing was claimed by the refused saves
    expect(store.save("ok", { toolType: "t" }).id).toBe("0");
  });

  it("reads 1-based line pages that add up to the exact content", () => {
    const store = storeIn(tempDir("ts-art-"));
    store.save("l1\nl2\nl3\nl4\nl5", { toolType: "bash", name: "five" });
    expect(store.read("artifact://0", { offset: 2, limit: 2 })).toEqual({
      content: "l2\nl3\n",
      offset: 2,
      lineCount: 2,
      totalLines: 5,
      hasMore: true,
    });
    expect(store.read("five", { offset: 4 })).toEqual({ content: "l4\nl5", offset: 4, lineCount: 2, totalLines: 5, hasMore: false });
    expect(store.read("0", { offset: 9 })).toEqual({ content: "", offset: 9, lineCount: 0, totalLines: 5, hasMore: false });
    const pages = [1, 3, 5].map((offset) => store.read("0", { offset, limit: 2 })!.content);
    expect(pages.join("")).toBe("l1\nl2\nl3\nl4\nl5");
    expect(store.read("missing")).toBeNull();
    expect(codeOf(() => store.read("0", { offset: 0 }))).toBe("INVALID_OPTION");
    expect(codeOf(() => store.read("0", { limit: 1.5 }))).toBe("INVALID_OPTION");
  });

  it("streams through a writer: invisible until finished, then a normal artifact", () => {
    const root = tempDir("ts-art-");
    const store = storeIn(root);
    const writer = store.createWriter("bash", { name: "build-log" });
    writer.write("compiling\n");
    writer.write(Buffer.from("done\n"));
    expect(writer.id).toBe("0");
    expect(store.get("0")).toBeNull();
    expect(store.list()).toEqual([]);
    expect(readdirSync(store.dir).filter((n) => !n.startsWith("."))).toEqual(["0.meta.json"]);
    const ref = writer.finish();
    expect(ref).toMatchObject({ id: "0", name: "build-log", sizeBytes: 15, summary: "compiling done " });
    expect(storeIn(root).get("build-log")).toBe("compiling\ndone\n");
    const dropped = store.createWriter("bash");
    dropped.write("never published");
    dropped.abort();
    // the aborted id keeps a tombstone: it was handed out, so no process may hand it out again
    expect(readdirSync(store.dir).sort()).toEqual(["0.bash.log", "0.meta.json", "1.meta.json"]);
    expect(readFileSync(join(store.dir, "1.meta.json"), "utf8")).toBe('{"v":1,"id":"1","removed":true}\n');
    expect(store.save("later", { toolType: "bash" }).id).toBe("2");
  });

  it("allocate reserves an id whose file the caller writes; size and summary come from the file", () => {
    const store = storeIn(tempDir("ts-art-"));
    const slot = store.allocate("../../evil");
    expect(slot).toEqual({ id: "0", uri: "artifact://0", path: join(store.dir, "0.tool.log"), toolType: "tool" });
    expect(store.get("0")).toBeNull();
    writeFileSync(slot.path, "streamed\noutput\n");
    expect(store.getRef("0")).toMatchObject({ sizeBytes: 16, summary: "streamed output " });
    expect(store.get("artifact://0")).toBe("streamed\noutput\n");
  });

  it("a failed write (ENOSPC) throws PERSISTENCE_FAILED, leaves no file under a final name, and the next save works", () => {
    const root = tempDir("ts-art-");
    const store = storeIn(root);
    store.save("before", { toolType: "bash" });
    const restore = injectFault("writeSync", (call) => (call === 1 ? "ENOSPC" : undefined));
    let err: unknown;
    try {
      store.save("x".repeat(10_000), { toolType: "bash" });
    } catch (e) {
      err = e;
    } finally {
      restore();
    }
    expect((err as { code?: string }).code).toBe("PERSISTENCE_FAILED");
    expect(((err as Error).cause as { code?: string }).code).toBe("ENOSPC");
    expect(readdirSync(store.dir).sort()).toEqual(["0.bash.log", "0.meta.json", "1.meta.json"]);
    expect(readFileSync(join(store.dir, "1.meta.json"), "utf8")).toBe('{"v":1,"id":"1","removed":true}\n');
    expect(store.list().map((r) => r.id)).toEqual(["0"]);
    const after = store.save("after", { toolType: "bash" });
    expect(store.get(after.id)).toBe("after");
    expect(readFileSync(after.path, "utf8")).toBe("after");
  });

  it("with fsync: true every finished file and the directory are synced", () => {
    const store = storeIn(tempDir("ts-art-"), { fsync: true });
    const synced: number[] = [];
    const restore = injectFault("fsyncSync", (_call, args) => {
      synced.push(args[0] as number);
      return undefined;
    });
    try {
      store.save("durable", { toolType: "bash" });
      const writer = store.createWriter("bash");
      writer.write("streamed");
      writer.finish();
    } finally {
      restore();
    }
    // the new artifacts directory + its parent; save: meta file + dir, content file + dir;
    // writer: content fd, meta file + dir, dir after rename
    expect(synced.length).toBe(10);
    expect(storeIn(tempDir("ts-art-")).fsync).toBe(false);
  });

  it("a failed rename leaves the previous files intact", () => {
    const store = storeIn(tempDir("ts-art-"));
    store.save("kept", { toolType: "bash" });
    const restore = injectFault("renameSync", () => "EIO");
    try {
      expect(codeOf(() => store.save("lost", { toolType: "bash" }))).toBe("PERSISTENCE_FAILED");
    } finally {
      restore();
    }
    // no tombstone could be renamed into place either: the empty claim keeps id 1 taken
    expect(readdirSync(store.dir).sort()).toEqual(["0.bash.log", "0.meta.json", "1.meta.json"]);
    expect(readFileSync(join(store.dir, "1.meta.json"), "utf8")).toBe("");
    expect(store.get("0")).toBe("kept");
  });

  it("never follows symlinks planted in the directory", () => {
    const root = tempDir("ts-art-");
    const secret = join(root, "secret.txt");
    writeFileSync(secret, "top secret");
    const warnings: StoreWarning[] = [];
    const store = storeIn(root, { onWarning: (w) => warnings.push(w) });
    store.save("real", { toolType: "bash" });
    symlinkSync(secret, join(store.dir, "1.bash.log"));
    symlinkSync(secret, join(store.dir, "2.meta.json"));
    symlinkSync(secret, join(store.dir, "3.md"));
    expect(store.get("1")).toBeNull();
    expect(store.get("2")).toBeNull();
    expect(store.getAgentOutput("3")).toBeNull();
    expect(store.list().map((r) => r.id)).toEqual(["0"]);
    // planted names are never claimed either: the next id is above them
    expect(store.save("next", { toolType: "bash" }).id).toBe("3");
    expect(readFileSync(secret, "utf8")).toBe("top secret");
    expect(warnings.some((w) => w.code === "ARTIFACT_NOT_FOUND" && w.path === join(store.dir, "3.md"))).toBe(true);
  });

  it("ignores corrupt metadata with a warning and falls back to the content file", () => {
    const root = tempDir("ts-art-");
    storeIn(root).save("content", { toolType: "bash", name: "n" });
    const warnings: StoreWarning[] = [];
    const store = storeIn(root, { onWarning: (w) => warnings.push(w) });
    writeFileSync(join(store.dir, "0.meta.json"), '{"v":1,"id":"0","toolType":"../../x"');
    expect(store.get("0")).toBe("content");
    expect(store.get("n")).toBeNull();
    expect(warnings.map((w) => w.code)).toEqual(["MALFORMED_LINES"]);
  });

  it("removed ids are never handed out again, even after a restart", () => {
    const root = tempDir("ts-art-");
    const store = storeIn(root);
    for (let i = 0; i < 3; i++) store.save(`c${i}`, { toolType: "bash" });
    expect(store.clear()).toBe(3);
    expect(store.list()).toEqual([]);
    expect(store.get("2")).toBeNull();
    expect(readdirSync(store.dir).sort()).toEqual(["0.meta.json", "1.meta.json", "2.meta.json"]);
    expect(readFileSync(join(store.dir, "0.meta.json"), "utf8")).toBe('{"v":1,"id":"0","removed":true}\n');
    expect(storeIn(root).save("fresh", { toolType: "bash" }).id).toBe("3");
    expect(storeIn(root).get("2")).toBeNull();
  });

  it("clear removes crash-leftover temp files older than an hour but keeps fresh ones and agent outputs", () => {
    const hour = 3_600_000;
    const store = storeIn(tempDir("ts-art-"), { now: () => 10 * hour });
    store.save("a", { toolType: "bash" });
    store.saveAgentOutput(store.allocateAgentOutputId("helper"), "# done");
    const old = join(store.dir, ".1.bash.log.123-abc.tmp");
    const fresh = join(store.dir, ".2.bash.log.456-def.tmp");
    writeFileSync(old, "crash leftover");
    writeFileSync(fresh, "still streaming elsewhere");
    utimesSync(old, (9 * hour) / 1000, (9 * hour) / 1000);
    utimesSync(fresh, (9 * hour + 1) / 1000, (9 * hour + 1) / 1000);
    expect(store.clear()).toBe(1);
    expect(readdirSync(store.dir).sort()).toEqual([".2.bash.log.456-def.tmp", "0.meta.json", "helper.md"]);
  });

  it("a hard-linked copy (fork) keeps the source intact when either side writes or removes", () => {
    const root = tempDir("ts-art-");
    const source = storeIn(root);
    source.save("shared", { toolType: "bash", name: "s" });
    source.saveAgentOutput(source.allocateAgentOutputId("agent"), "v1");
    const forkDir = join(root, "fork");
    linkTree(source.dir, forkDir, () => {});
    expect(statSync(join(forkDir, "0.bash.log")).ino).toBe(statSync(join(source.dir, "0.bash.log")).ino);
    const fork = new ArtifactStore(forkDir, { now: () => 1_000 });
    expect(fork.getRef("s")).toEqual({ ...source.getRef("s")!, path: join(forkDir, "0.bash.log") });
    expect(fork.save("fork only", { toolType: "bash" }).id).toBe("1");
    fork.saveAgentOutput("agent", "v2");
    expect(fork.clear()).toBe(2);
    expect(source.get("0")).toBe("shared");
    expect(source.get("s")).toBe("shared");
    expect(source.getAgentOutput("agent")).toBe("v1");
    expect(source.list().map((r) => r.id)).toEqual(["0"]);
    expect(source.save("source next", { toolType: "bash" }).id).toBe("1");
  });

  it("linkTree links every file under directories however they are spelled (relative, dotted, trailing separator, nested)", () => {
    const root = tempDir("ts-art-");
    const source = storeIn(root);
    source.save("one", { toolType: "bash" });
    source.saveAgentOutput(source.allocateAgentOutputId("agent"), "v1");
    mkdirSync(join(source.dir, "sub", "deeper"), { recursive: true });
    writeFileSync(join(source.dir, "sub", "deeper", "note.txt"), "nested");
    symlinkSync("0.bash.log", join(source.dir, "sub", "link"));
    const names = (dir: string): string[] =>
      readdirSync(dir, { recursive: true, encoding: "utf8" })
        .filter((n) => !n.endsWith("link"))
        .sort();
    const spellings = [
      (dir: string) => `${dir}/`,
      (dir: string) => `${dir}/./`,
      (dir: string) => `${root}//${basename(source.dir)}/../${basename(dir)}`,
      (dir: string) => relative(process.cwd(), dir),
    ];
    for (const [i, spell] of spellings.entries()) {
      const forkDir = join(root, `fork${i}`);
      const warnings: StoreWarning[] = [];
      const result = linkTree(spell(source.dir), spell(forkDir), (w) => warnings.push(w));
      expect(names(forkDir), `spelling ${i}`).toEqual(names(source.dir));
      expect(result).toEqual({ linked: 4, copied: 0, failed: 1 });
      // The skipped symlink is named by its normalized path, as path.join names it.
      expect(warnings.map((w) => [w.code, w.path])).toEqual([["ARTIFACT_COPY_FAILED", join(spell(source.dir), "sub", "link")]]);
      const nested = join("sub", "deeper", "note.txt");
      expect(statSync(join(forkDir, nested)).ino, `spelling ${i}`).toBe(statSync(join(source.dir, nested)).ino);
      expect(statSync(join(forkDir, "0.bash.log")).ino).toBe(statSync(join(source.dir, "0.bash.log")).ino);
    }
  });

  it("a copy of the directory elsewhere (move) reads the same with paths under the new directory", () => {
    const root = tempDir("ts-art-");
    const store = storeIn(root);
    store.save({ a: 1 }, { toolType: "json", name: "obj", ttlMs: 10_000 });
    const moved = join(root, "moved");
    mkdirSync(moved);
    for (const name of readdirSync(store.dir)) linkSync(join(store.dir, name), join(moved, name));
    const there = new ArtifactStore(moved, { now: () => 1_000 });
    expect(there.list()).toEqual(store.list().map((r) => ({ ...r, path: join(moved, "0.json.log") })));
    expect(there.get("obj")).toEqual({ a: 1 });
  });
});
