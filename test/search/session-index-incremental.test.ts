import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { openSessionIndex, type SessionIndex, type SessionIndexOptions } from "../../src/search/session-index.ts";
import { expectCode } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";
import { append, header, line, message, writeSession } from "./helpers/sessions.ts";

const opened: SessionIndex[] = [];
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close();
});

async function open(options: SessionIndexOptions) {
  const index = await openSessionIndex(options);
  opened.push(index);
  return index;
}

function store() {
  const root = tempDir("ts-index-");
  const sessions = join(root, "sessions");
  const path = writeSession(
    sessions,
    "-tmp-a",
    "aaaa1111-0000-4000-8000-000000000001",
    "/work/a",
    message("user", "first alpha", { id: "u1" }),
  );
  return { root, sessions, path };
}

const ids = async (index: SessionIndex, query: string) => (await index.search(query)).map((h) => h.entryId).sort();

describe("SessionIndex catch-up", () => {
  it("reads only the bytes appended since the last refresh, and nothing when nothing changed", async () => {
    const { root, path } = store();
    const index = await open({ root });
    const first = await index.refresh();
    expect(first).toMatchObject({ sessionsAdded: 1, entriesIndexed: 1, bytesRead: statSync(path).size });
    expect(await index.refresh()).toMatchObject({ sessionsUpdated: 0, bytesRead: 0, headerBytesRead: 0, entriesIndexed: 0 });

    const added = message("assistant", "second beta", { id: "a1" }) + message("user", "third gamma", { id: "u2" });
    append(path, added);
    const status = await index.status();
    expect(status).toMatchObject({ fresh: false, sessionsBehind: 1, bytesBehind: Buffer.byteLength(added) });
    const second = await index.refresh();
    expect(second).toMatchObject({ sessionsUpdated: 1, entriesIndexed: 2, bytesRead: Buffer.byteLength(added) });
    // the header line (without its newline) is read back, and only it, to tell an append from a rewrite
    expect(second.headerBytesRead).toBe(Buffer.byteLength(header("aaaa1111-0000-4000-8000-000000000001", "/work/a")) - 1);
    expect(await index.status()).toMatchObject({ fresh: true, sessionsBehind: 0, bytesBehind: 0, entriesIndexed: 3 });
    expect(await ids(index, "alpha")).toEqual(["u1"]);
    expect(await ids(index, "gamma")).toEqual(["u2"]);
  });

  it("leaves an unterminated last line until its newline arrives", async () => {
    const { root, path } = store();
    const index = await open({ root });
    await index.refresh();
    const next = message("user", "delta torn", { id: "u2" });
    append(path, next.slice(0, 20));
    expect(await index.refresh()).toMatchObject({ entriesIndexed: 0, bytesRead: 20 });
    expect(await ids(index, "delta")).toEqual([]);
    append(path, next.slice(20));
    // the torn part is read again with the rest: bytes past the last complete line
    expect(await index.refresh()).toMatchObject({ entriesIndexed: 1, bytesRead: Buffer.byteLength(next) });
    expect(await ids(index, "delta")).toEqual(["u2"]);
  });

  it("indexes a rewritten file (new inode, shrunk, or another header) from its start, dropping its old rows", async () => {
    const { root, path } = store();
    const index = await open({ root });
    await index.refresh();
    // atomic rewrite: temp file renamed over the session (a new inode)
    const tmp = `${path}.tmp`;
    writeFileSync(tmp, header("aaaa1111-0000-4000-8000-000000000001", "/work/a") + message("user", "rewritten epsilon", { id: "u9" }));
    renameSync(tmp, path);
    expect(await index.refresh()).toMatchObject({ sessionsReindexed: 1, bytesRead: statSync(path).size });
    expect(await ids(index, "alpha")).toEqual([]);
    expect(await ids(index, "epsilon")).toEqual(["u9"]);

    // shrunk in place below the indexed offset
    const before = readFileSync(path);
    truncateSync(path, before.indexOf("\n") + 1);
    expect(await index.refresh()).toMatchObject({ sessionsReindexed: 1 });
    expect(await ids(index, "epsilon")).toEqual([]);

    // same inode, grown, but another header (another session id of the same length)
    const other = header("aaaa1111-0000-4000-8000-000000000009", "/work/a");
    writeFileSync(path, other + message("user", "zeta after", { id: "u3" }));
    expect(await index.refresh()).toMatchObject({ sessionsReindexed: 1 });
    const hits = await index.search("zeta");
    expect(hits.map((h) => [h.sessionId, h.entryId])).toEqual([["aaaa1111-0000-4000-8000-000000000009", "u3"]]);
  });

  it("drops the rows of a deleted session and adds new sessions", async () => {
    const { root, sessions, path } = store();
    const index = await open({ root });
    await index.refresh();
    writeSession(sessions, "-tmp-b", "bbbb2222-0000-4000-8000-000000000002", "/work/b", message("user", "another alpha", { id: "b1" }));
    rmSync(path);
    expect(await index.status()).toMatchObject({ fresh: false, sessionsBehind: 1, sessionsGone: 1 });
    expect(await index.refresh()).toMatchObject({ sessionsAdded: 1, sessionsRemoved: 1 });
    expect(await ids(index, "alpha")).toEqual(["b1"]);
    expect(await index.status()).toMatchObject({ fresh: true, sessionsIndexed: 1, entriesIndexed: 1 });
  });

  it("skips files that are no session (another agent's transcript) without reading them again", async () => {
    const { root, sessions } = store();
    const foreign = join(sessions, "-tmp-a", "claude.jsonl");
    writeFileSync(foreign, line({ type: "user", message: { role: "user", content: "alpha foreign" } }));
    const index = await open({ root });
    await index.refresh();
    expect(await ids(index, "alpha")).toEqual(["u1"]);
    append(foreign, line({ type: "user", message: { role: "user", content: "more" } }));
    expect(await index.refresh()).toMatchObject({ sessionsUpdated: 1, bytesRead: 0, entriesIndexed: 0 });
  });

  it("indexes a spilled tool output's artifact and a subagent's output, whole", async () => {
    const { root, sessions } = store();
    const path = writeSession(
      sessions,
      "-tmp-c",
      "cccc3333-0000-4000-8000-000000000003",
      "/work/c",
      message("toolResult", "Output too large; stored as artifact://7", { id: "t1" }),
    );
    const dir = path.slice(0, -".jsonl".length);
    mkdirSync(dir);
    writeFileSync(join(dir, "7.bash.log"), `needle-in-artifact ${"x ".repeat(40_000)} beyond-the-bound`);
    append(path, message("toolResult", "subagent wrote agent://review.1 and artifact://007", { id: "t2" }));
    writeFileSync(join(dir, "review.1.md"), "the subagent found a quokka");
    const index = await open({ root });
    const report = await index.refresh();
    const artifact = statSync(join(dir, "7.bash.log")).size;
    expect(report.artifactBytesRead).toBe(2 * artifact + Buffer.byteLength("the subagent found a quokka"));
    expect(await ids(index, "needle")).toEqual(["t1", "t2"]);
    expect(await ids(index, "beyond")).toEqual(["t1", "t2"]); // no cut (issue 34)
    expect(await ids(index, "quokka")).toEqual(["t2"]);
    expect((await index.search("quokka"))[0]!.snippet).toContain("«quokka»");
  });

  it("rebuilds a deleted or damaged index file, with an INDEX_REBUILT warning for the damage", async () => {
    const { root } = store();
    const warnings: StoreWarning[] = [];
    const onWarning = (w: StoreWarning) => warnings.push(w);
    const first = await open({ root, onWarning });
    await first.refresh();
    await first.close();
    const file = join(root, "index", "sessions.sqlite");

    rmSync(file);
    const second = await open({ root, onWarning });
    expect(await ids(second, "alpha")).toEqual(["u1"]);
    await second.close();
    expect(warnings).toEqual([]);

    // garbage past the header, which still names the file as ours (application id): rebuilt
    const head = readFileSync(file).subarray(0, 100);
    writeFileSync(file, Buffer.concat([head, Buffer.alloc(8192, 0x41)]));
    const third = await open({ root, onWarning });
    expect(warnings.map((w) => w.code)).toEqual(["INDEX_REBUILT"]);
    expect(await ids(third, "alpha")).toEqual(["u1"]);
    await third.close();
    // garbage over the header too: nothing proves the file ours any more, so it is left as it is (issue 32, #1)
    const garbage = Buffer.alloc(8192, 0x41);
    writeFileSync(file, garbage);
    await expectCode(open({ root, onWarning }), "OUTPUT_EXISTS");
    expect(readFileSync(file).equals(garbage)).toBe(true);
  });

  it("rebuilds an index whose pages past the first ones are damaged (met when its statements are prepared)", async () => {
    const { root, sessions } = store();
    let body = "";
    for (let i = 0; i < 400; i++) body += message("user", `filler text number${i} with words ${"z".repeat(200)}`, { id: `f${i}` });
    writeSession(sessions, "-tmp-b", "bbbb2222-0000-4000-8000-000000000002", "/work/b", body);
    const first = await open({ root });
    await first.refresh();
    await first.close();
    const file = join(root, "index", "sessions.sqlite");
    const size = statSync(file).size;
    expect(size).toBeGreaterThan(64 * 1024);
    // the first 8 pages stay (the schema and meta read on open), the rest is overwritten
    const fd = openSync(file, "r+");
    writeSync(fd, Buffer.alloc(size - 32768, 0xff), 0, size - 32768, 32768);
    closeSync(fd);
    const warnings: StoreWarning[] = [];
    const index = await open({ root, onWarning: (w) => warnings.push(w) });
    expect(await ids(index, "alpha")).toEqual(["u1"]);
    expect((await index.search("number399")).map((h) => h.entryId)).toEqual(["f399"]);
    expect(warnings.map((w) => w.code)).toEqual(["INDEX_REBUILT"]);
  });

  it("rebuild() drops everything and indexes every session again", async () => {
    const { root, path } = store();
    const index = await open({ root });
    await index.refresh();
    const report = await index.rebuild();
    expect(report).toMatchObject({ sessionsAdded: 1, entriesIndexed: 1, bytesRead: statSync(path).size });
    expect(await index.status()).toMatchObject({ fresh: true, entriesIndexed: 1 });
  });

  it("keeps the index of a tree read in place (pi's) in the store root, writing nothing into the tree", async () => {
    const root = tempDir("ts-index-");
    const tree = tempDir("ts-pi-tree-");
    writeSession(tree, "--work-p--", "dddd4444-0000-4000-8000-000000000004", "/work/p", message("user", "pi alpha", { id: "p1" }));
    const index = await open({ root, sessionsDir: tree });
    expect(await ids(index, "alpha")).toEqual(["p1"]);
    const status = await index.status();
    expect(status.location.startsWith(join(root, "index", "tree-"))).toBe(true);
    expect(readdirNames(tree)).toEqual(["--work-p--"]);
  });
});

function readdirNames(dir: string): string[] {
  return readdirSync(dir);
}

describe("SessionIndex and giant lines", () => {
  it("skips a line past MAX_INDEXED_LINE_BYTES (an inlined image) without holding it, and indexes the lines around it", async () => {
    const { root, path } = store();
    const giant = `${JSON.stringify({
      type: "message",
      id: "img",
      parentId: null,
      timestamp: "2026-01-01T00:00:02.000Z",
      message: { role: "user", content: [{ type: "image", data: "A".repeat(17 << 20), mimeType: "image/png" }] },
    })}\n`;
    // a 3 MiB line spans chunk reads and is indexed whole
    const long = message("toolResult", `needle-start ${"y".repeat(3 << 20)}`, { id: "t1" });
    append(path, long + giant + message("user", "after the giant omega", { id: "u2" }));
    const index = await open({ root });
    const report = await index.refresh();
    expect(report).toMatchObject({ entriesIndexed: 3, largeLinesSkipped: 1, bytesRead: statSync(path).size });
    expect(await ids(index, "needle")).toEqual(["t1"]);
    expect(await ids(index, "alpha")).toEqual(["u1"]);
    expect(await ids(index, "omega")).toEqual(["u2"]);
  });
});
