import { createHash, randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../src/index.ts";
import { cli } from "../support/cli.ts";
import { expectCode } from "../support/error-code.ts";
import { rawPool } from "../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

const backends: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

const digest = async (db: ReturnType<typeof rawPool>) =>
  createHash("sha256")
    .update(
      JSON.stringify([
        (await db.query("SELECT * FROM entries ORDER BY session_id, seq")).rows,
        (await db.query("SELECT id, header, last_seq, body_bytes, generation FROM sessions ORDER BY id")).rows,
      ]),
    )
    .digest("hex");

// Skipped only where no PostgreSQL can start: one loud SKIPPED line, and under CI=true a failed run instead (support/pg-global-setup.ts).
describe.skipIf(!pgCluster())("transcript-store rekey --store (PostgreSQL)", () => {
  it("re-encrypts every row under the new key in one transaction; a wrong key or a held lease changes nothing", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    backends.push(backend);
    const db = rawPool(url);
    const dir = tempDir();
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const sm = await SessionManager.create("/p", { store: backend, encryption: { key: oldKey } });
    sm.appendMessage({ role: "user", content: "quince" });
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "quince noted" }] });
    const entries = sm.getEntries();
    await sm.close();
    const oldFile = join(dir, "old.key");
    const newFile = join(dir, "new.key");
    const wrongFile = join(dir, "wrong.key");
    writeFileSync(oldFile, `${oldKey.toString("hex")}\n`);
    writeFileSync(newFile, newKey);
    writeFileSync(wrongFile, randomBytes(32));
    const args = (key: string) => ["rekey", sm.sessionId.slice(0, 20), "--store", url, "--key-file", key, "--new-key-file", newFile];

    const before = await digest(db);
    const wrong = await cli(args(wrongFile));
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain("DECRYPT_FAILED");
    expect(await digest(db)).toBe(before);

    const writer = await SessionManager.open(sm.sessionId, { store: backend, encryption: { key: oldKey } });
    const locked = await cli(args(oldFile));
    expect(locked.stderr).toContain("SESSION_LOCKED");
    expect(await digest(db)).toBe(before);
    await writer.close();

    const run = await cli([...args(oldFile), "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.records).toEqual([expect.objectContaining({ type: "rekeyed", id: sm.sessionId, entries: 2 })]);
    const header = JSON.parse((await db.query("SELECT header FROM sessions")).rows[0].header);
    expect(header.encryption.keyId).toBe(run.records[0]!.toKeyId);
    expect(JSON.stringify((await db.query("SELECT * FROM entries")).rows)).not.toContain("quince");
    const reopened = await SessionManager.open(sm.sessionId, { store: backend, encryption: { key: newKey }, readOnly: true });
    expect(reopened.getEntries()).toEqual(entries);
    await reopened.close();
    await expectCode(SessionManager.open(sm.sessionId, { store: backend, encryption: { key: oldKey }, readOnly: true }), "DECRYPT_FAILED");

    const plain = await SessionManager.create("/p", { store: backend });
    plain.appendMessage({ role: "user", content: "plain" });
    await plain.close();
    const settled = await digest(db);
    const refused = await cli(["rekey", plain.sessionId, "--store", url, "--key-file", newFile, "--new-key-file", oldFile]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("INVALID_OPTION");
    expect(await digest(db)).toBe(settled);
  });
});
