import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../src/index.ts";
import { cli } from "../support/cli.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

const opened: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of opened.splice(0)) await b.close();
});

describe.skipIf(!pgCluster())("export from a database carries its damaged rows, as from a file", () => {
  it("a row that is not a JSON entry goes out as a raw record (counted on stderr); an import into a file tree quarantines it", async () => {
    const url = await freshDatabase();
    const store = PostgresBackend.of(url);
    opened.push(store);
    const m = await SessionManager.create("/w", { store });
    m.appendMessage({ role: "user", content: "one", timestamp: 1 });
    m.appendMessage({ role: "user", content: "two", timestamp: 1 });
    await m.close();
    await (await store.connect()).pool.query("UPDATE entries SET line = 'not json at all' WHERE session_id = $1 AND seq = 2", [
      m.sessionId,
    ]);
    const exported = await cli(["export", m.sessionId, "--store", url, "--root", tempDir()]);
    expect(exported.code).toBe(0);
    const records = exported.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const raw = records.filter((r) => r.type === "transcript_store_malformed");
    expect(raw).toEqual([expect.objectContaining({ line: 3, raw_base64: Buffer.from("not json at all").toString("base64") })]);
    expect(exported.stderr).toContain("1 damaged line(s) exported as raw records");
    const root = tempDir();
    const imported = await cli(["import", "--root", root, "--json"], { stdin: exported.stdout });
    expect(imported.records[0]).toMatchObject({ type: "imported", entries: 1, quarantined: 1 });
  });
});
