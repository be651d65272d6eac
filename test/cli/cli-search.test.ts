import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { closeUrlStores } from "../../src/storage/store-url.ts";
import { cli, cliProcess } from "../support/cli.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";
import { append, message, writeSession } from "../search/helpers/sessions.ts";

function store() {
  const root = tempDir("ts-cli-search-");
  const path = writeSession(
    join(root, "sessions"),
    "-tmp-a",
    "aaaa1111-0000-4000-8000-000000000001",
    "/work/a",
    message("user", "how do I rotate the signing keys", { id: "u1", timestamp: "2026-01-02T10:00:00.000Z" }) +
      message("assistant", "Rotate the keys with the admin tool", { id: "a1", timestamp: "2026-01-02T10:00:05.000Z", model: "m-large" }),
  );
  return { root, path };
}

describe("transcript-store search / index", () => {
  it("prints ranked hits as JSON records naming session, entry, role, time and a marked snippet", async () => {
    const { root } = store();
    const out = await cli(["--root", root, "search", "rotate", "keys", "--json"]);
    expect(out.code).toBe(0);
    const hits = [...out.records].sort((a, b) => a.entryId.localeCompare(b.entryId));
    expect(hits.map((r) => [r.type, r.sessionId, r.entryId, r.role])).toEqual([
      ["hit", "aaaa1111-0000-4000-8000-000000000001", "a1", "assistant"],
      ["hit", "aaaa1111-0000-4000-8000-000000000001", "u1", "user"],
    ]);
    expect(out.records[0]!.score).toBeGreaterThanOrEqual(out.records[1]!.score);
    expect(hits[1]!.snippet).toBe("how do I «rotate» the signing «keys»");
    expect(hits[1]!.timestamp).toBe("2026-01-02T10:00:00.000Z");
  });

  it("filters by role, model, session, cwd and time, given as flags", async () => {
    const { root } = store();
    const ids = async (...flags: string[]) =>
      (await cli(["--root", root, "search", "rotate", "--json", ...flags])).records.map((r) => r.entryId).sort();
    expect(await ids("--role", "user")).toEqual(["u1"]);
    expect(await ids("--role", "user,assistant")).toEqual(["a1", "u1"]);
    expect(await ids("--model", "large")).toEqual(["a1"]);
    expect(await ids("--session", "bbbb")).toEqual([]);
    expect(await ids("--cwd", "/work/a")).toEqual(["a1", "u1"]);
    expect(await ids("--cwd", "/work")).toEqual([]);
    expect(await ids("--since", "2026-01-02T10:00:01Z")).toEqual(["a1"]);
    expect(await ids("--until", "2026-01-01")).toEqual([]);
    expect(await ids("--since", "100000d", "--limit", "1")).toHaveLength(1);
  });

  it("--no-refresh answers from the index as it is and says so on stderr; a plain search then catches up", async () => {
    const { root, path } = store();
    expect((await cli(["--root", root, "index"])).code).toBe(0);
    append(path, message("user", "an okapi question", { id: "u2", timestamp: "2026-01-02T10:01:00.000Z" }));
    const stale = await cli(["--root", root, "search", "okapi", "--no-refresh"]);
    expect(stale.code).toBe(1); // nothing matched, as grep says it
    expect(stale.stdout).toBe("");
    expect(stale.stderr).toContain("--no-refresh");
    const fresh = await cli(["--root", root, "search", "okapi", "--json"]);
    expect(fresh.records.map((r) => r.entryId)).toEqual(["u2"]);
    expect(fresh.stderr).not.toContain("--no-refresh");
  });

  it("says what is wrong with a flag or the query (INVALID_QUERY), exit 2 for either as grep", async () => {
    const { root } = store();
    for (const flags of [
      ["--role", "system"],
      ["--since", "yesterday"],
      ["--limit", "0"],
    ]) {
      const out = await cli(["--root", root, "search", "rotate", ...flags]);
      expect(out.code).toBe(2);
    }
    const bad = await cli(["--root", root, "search", '"rotate', "--json"]);
    expect(bad.code).toBe(2);
    expect(bad.records.at(-1)).toMatchObject({ type: "error", code: "INVALID_QUERY", exitCode: 2 });
    expect((await cli(["--root", root, "search"])).code).toBe(2);
    // --index names a file of the file tree's index: with a database store it is a usage error, not ignored
    const pg = await cli(["--root", root, "--store", "postgres://127.0.0.1:1/none", "search", "rotate", "--index", "x.sqlite"]);
    expect(pg.code).toBe(2);
    expect(pg.stderr).toContain("database store");
  });

  it.skipIf(!pgCluster())("search and index --status answer from a PostgreSQL store's own index (--store)", async () => {
    const url = await freshDatabase();
    const m = await SessionManager.create("/proj", { store: url });
    const entry = m.appendMessage({ role: "user", content: "rotate the zebra logs" });
    await m.close();
    await closeUrlStores();
    const out = await cli(["--store", url, "search", "zebra", "--json"]);
    expect(out.code).toBe(0);
    expect(out.records.filter((r) => r.type === "hit").map((r) => [r.sessionId, r.entryId])).toEqual([[m.sessionId, entry]]);
    const status = await cli(["--store", url, "index", "--status", "--json"]);
    expect(status.code).toBe(0);
    expect(status.records.at(-1)).toMatchObject({ fresh: true });
    await closeUrlStores();
  });

  it("--index names the index file (for a tree that must stay untouched)", async () => {
    const { root } = store();
    const file = join(tempDir("ts-cli-index-"), "elsewhere.sqlite");
    const out = await cli(["--root", root, "search", "rotate", "--index", file, "--json"]);
    expect(out.records).toHaveLength(2);
    expect(existsSync(file)).toBe(true);
    expect(existsSync(join(root, "index"))).toBe(false);
  });

  it("index --status tells how far behind the index is; index catches up; --rebuild starts over", async () => {
    const { root, path } = store();
    const status = async () => (await cli(["--root", root, "index", "--status", "--json"])).records[0]!;
    expect(await status()).toMatchObject({ type: "index-status", fresh: false, sessionsBehind: 1 });
    const refreshed = await cli(["--root", root, "index", "--json"]);
    expect(refreshed.records[0]).toMatchObject({ type: "index-refresh", rebuilt: false, sessionsAdded: 1, entriesIndexed: 2 });
    const more = message("user", "and the backup keys?", { id: "u2" });
    append(path, more);
    expect(await status()).toMatchObject({ fresh: false, bytesBehind: Buffer.byteLength(more) });
    expect((await cli(["--root", root, "index", "--json"])).records[0]).toMatchObject({ bytesRead: Buffer.byteLength(more) });
    expect(await status()).toMatchObject({ fresh: true, entriesIndexed: 3 });
    const rebuilt = await cli(["--root", root, "index", "--rebuild", "--json"]);
    expect(rebuilt.records[0]).toMatchObject({ rebuilt: true, sessionsAdded: 1, entriesIndexed: 3 });
    expect((await cli(["--root", root, "index", "--rebuild", "--status"])).code).toBe(2);
  });

  it("never puts a transcript's control characters on the terminal raw (a real child process)", async () => {
    const root = tempDir("ts-cli-search-");
    writeSession(
      join(root, "sessions"),
      "-tmp-a",
      "aaaa1111-0000-4000-8000-000000000001",
      "/work/\u001b]0;pwned\u0007",
      message("user", "hostile \u001b[2J\u001b]52;c;Zm9v\u0007 payload \u009b31m here", { id: "u1" }),
    );
    const out = await cliProcess(["--root", root, "search", "payload"], { env: { TRANSCRIPT_STORE_HOME: root } });
    expect(out.code).toBe(0);
    const text = out.stdout.toString("utf8");
    expect(text).toContain("«payload»");
    expect(text).toContain("\\u001b");
    const controls = [...text].filter((c) => {
      const code = c.charCodeAt(0);
      return (code < 0x20 && c !== "\n") || (code >= 0x7f && code <= 0x9f);
    });
    expect(controls).toEqual([]);
    // and the child printed no ExperimentalWarning of node:sqlite
    expect(out.stderr.toString("utf8")).not.toContain("ExperimentalWarning");
  });
});
