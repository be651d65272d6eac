import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { openSessionIndex, type SessionIndex } from "../../src/search/session-index.ts";
import { loadSqlite } from "../../src/search/sqlite.ts";
import { expectCode } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";
import { message, writeSession } from "./helpers/sessions.ts";

const opened: SessionIndex[] = [];
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close();
});

describe("openSessionIndex", () => {
  it("a runtime without the SQLite module gets INDEX_UNAVAILABLE, and the warning hook is gone after", async () => {
    const emitWarning = process.emitWarning;
    await expectCode(loadSqlite("node:sqlite-absent"), "INDEX_UNAVAILABLE");
    expect(process.emitWarning).toBe(emitWarning);
    await loadSqlite();
    expect(process.emitWarning).toBe(emitWarning);
  });

  it("validates its options once (INVALID_OPTION), and a closed index refuses work", async () => {
    await expectCode(openSessionIndex({ indexPath: "" }), "INVALID_OPTION");
    await expectCode(openSessionIndex({ roots: [""] }), "INVALID_OPTION");
    await expectCode(openSessionIndex({ batchBytes: 0 }), "INVALID_OPTION");
    await expectCode(openSessionIndex({ store: "mysql://nowhere/db" }), "INVALID_OPTION"); // no backend for the scheme
    const index = await openSessionIndex({ root: tempDir("ts-index-") });
    await index.close();
    await expectCode(index.refresh(), "INVALID_OPTION");
  });

  it("an index file of another tree is started over for this one (INDEX_REBUILT), never mixed", async () => {
    const file = join(tempDir("ts-index-file-"), "shared.sqlite");
    const a = tempDir("ts-index-a-");
    const b = tempDir("ts-index-b-");
    writeSession(join(a, "sessions"), "-tmp-a", "aaaa1111-0000-4000-8000-000000000001", "/a", message("user", "word from a", { id: "a1" }));
    writeSession(join(b, "sessions"), "-tmp-b", "bbbb2222-0000-4000-8000-000000000002", "/b", message("user", "word from b", { id: "b1" }));
    const first = await openSessionIndex({ root: a, indexPath: file });
    expect((await first.search("word")).map((h) => h.entryId)).toEqual(["a1"]);
    await first.close();
    const warnings: StoreWarning[] = [];
    const second = await openSessionIndex({ root: b, indexPath: file, onWarning: (w) => warnings.push(w) });
    opened.push(second);
    expect(warnings.map((w) => w.code)).toEqual(["INDEX_REBUILT"]);
    expect((await second.search("word")).map((h) => h.entryId)).toEqual(["b1"]);
  });

  it("another process writing the index past busyTimeoutMs makes a refresh fail with STORE_BUSY, then work", async () => {
    const root = tempDir("ts-index-");
    writeSession(
      join(root, "sessions"),
      "-tmp-a",
      "aaaa1111-0000-4000-8000-000000000001",
      "/a",
      message("user", "busy word", { id: "a1" }),
    );
    const index = await openSessionIndex({ root, busyTimeoutMs: 50 });
    opened.push(index);
    const other = (await loadSqlite())(join(root, "index", "sessions.sqlite"));
    other.exec("BEGIN IMMEDIATE");
    await expectCode(index.refresh(), "STORE_BUSY");
    await expectCode(index.search("busy"), "STORE_BUSY");
    other.exec("ROLLBACK");
    other.close();
    expect((await index.search("busy")).map((h) => h.entryId)).toEqual(["a1"]);
    await expectCode(openSessionIndex({ busyTimeoutMs: -1 }), "INVALID_OPTION");
  });
});
