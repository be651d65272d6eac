import { rmSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSessionIndex, type SessionIndex, type SessionIndexOptions } from "../../src/search/session-index.ts";
import { tempDir } from "../support/temp-dir.ts";
import { append, message, writeSession } from "./helpers/sessions.ts";

const opened: SessionIndex[] = [];
const held: DatabaseSync[] = [];
afterEach(async () => {
  for (const db of held.splice(0)) db.close();
  for (const index of opened.splice(0)) await index.close();
});

async function open(options: SessionIndexOptions) {
  const index = await openSessionIndex(options);
  opened.push(index);
  return index;
}

function store() {
  const root = tempDir("ts-index-pass-");
  const sessions = join(root, "sessions");
  const a = writeSession(sessions, "-tmp-a", "aaaa1111-0000-4000-8000-000000000001", "/work/a", message("user", "alpha one", { id: "u1" }));
  const b = writeSession(sessions, "-tmp-b", "bbbb2222-0000-4000-8000-000000000002", "/work/b", message("user", "beta two", { id: "u2" }));
  return { root, a, b, indexPath: join(root, "index", "sessions.sqlite") };
}

/** Another connection to the index file, raw (what another process's indexer is to this one). */
function other(indexPath: string): DatabaseSync {
  const db = new DatabaseSync(indexPath);
  held.push(db);
  return db;
}

const ids = async (index: SessionIndex, query: string) => (await index.search(query)).map((h) => h.entryId).sort();

describe("SessionIndex refresh pass", () => {
  it("answers a search while another process holds the write lock, when nothing changed (no write transaction)", async () => {
    const { root, indexPath } = store();
    const index = await open({ root, busyTimeoutMs: 0 });
    await index.refresh();
    const writer = other(indexPath);
    writer.exec("BEGIN IMMEDIATE");
    expect(await ids(index, "alpha")).toEqual(["u1"]);
    expect(await index.refresh()).toMatchObject({ filesSeen: 2, sessionsUpdated: 0, bytesRead: 0 });
    writer.exec("ROLLBACK");
  });

  it("still waits for the lock (STORE_BUSY past the timeout) when a file changed", async () => {
    const { root, a, indexPath } = store();
    const index = await open({ root, busyTimeoutMs: 0 });
    await index.refresh();
    append(a, message("assistant", "gamma three", { id: "a1" }));
    const writer = other(indexPath);
    writer.exec("BEGIN IMMEDIATE");
    await expect(index.refresh()).rejects.toMatchObject({ code: "STORE_BUSY" });
    writer.exec("ROLLBACK");
    expect(await ids(index, "gamma")).toEqual(["a1"]);
  });

  it("reads the indexed state again after another connection changed the index (rows dropped there are indexed again)", async () => {
    const { root, indexPath } = store();
    const index = await open({ root });
    expect(await ids(index, "alpha")).toEqual(["u1"]);
    other(indexPath).exec("DELETE FROM entries_text; DELETE FROM entries; DELETE FROM sessions;");
    expect(await ids(index, "alpha")).toEqual(["u1"]);
    expect(await ids(index, "beta")).toEqual(["u2"]);
  });

  it("keeps its own changes: appends, a removal and a rebuild each seen by the next search", async () => {
    const { root, a, b } = store();
    const index = await open({ root });
    expect(await ids(index, "alpha")).toEqual(["u1"]);
    append(a, message("assistant", "alpha again", { id: "a1" }));
    expect(await ids(index, "alpha")).toEqual(["a1", "u1"]);
    append(a, message("user", "alpha thrice", { id: "u3" }));
    expect(await ids(index, "alpha")).toEqual(["a1", "u1", "u3"]);
    rmSync(b);
    expect(await ids(index, "beta")).toEqual([]);
    expect(await index.refresh()).toMatchObject({ filesSeen: 1, sessionsRemoved: 0, bytesRead: 0 });
    await index.rebuild();
    expect(await ids(index, "alpha")).toEqual(["a1", "u1", "u3"]);
    expect(await index.status()).toMatchObject({ fresh: true, sessionsIndexed: 1, entriesIndexed: 3 });
  });
});
