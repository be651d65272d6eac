import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../src/index.ts";
import { cli } from "../support/cli.ts";
import { makePng } from "../support/png.ts";
import { rawPool } from "../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

const SECRET = "the launch code is tangerine-42";

/** The one session file under `root`'s sessions tree. */
function sessionFile(root: string): string {
  const files = readdirSync(join(root, "sessions"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".jsonl"));
  expect(files).toHaveLength(1);
  return join(root, "sessions", files[0]!);
}

// Skipped only where no PostgreSQL can start: one loud SKIPPED line, and under CI=true a failed run instead (support/pg-global-setup.ts).
describe.skipIf(!pgCluster())("an encrypted session moved between the file store and PostgreSQL", () => {
  it("migrate --to moves the ciphertext as it is: file → database → file byte-exact, readable with the same key in each", async () => {
    const url = await freshDatabase();
    const root = tempDir();
    const key = randomBytes(32);
    const m = await SessionManager.create("/proj", { root, encryption: { key } });
    m.appendMessage({ role: "user", content: SECRET });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "noted" }] });
    const entries = m.getEntries();
    await m.close();
    const original = readFileSync(m.sessionFile!);

    const there = await cli(["migrate", "--root", root, "--to", url]);
    expect(there.code, there.stderr + there.stdout).toBe(0);
    const db = rawPool(url);
    const rows = (await db.query("SELECT seq, kind, entry_id, line FROM entries ORDER BY seq")).rows;
    expect(rows.map((r) => [r.kind, r.entry_id])).toEqual([
      ["encrypted", null],
      ["encrypted", null],
    ]);
    expect(JSON.stringify(rows)).not.toContain("tangerine");
    const backend = PostgresBackend.of(url);
    try {
      const inDb = await SessionManager.open(m.sessionId, { store: backend, encryption: { key }, readOnly: true });
      expect(inDb.getEntries()).toEqual(entries);
      await inDb.close();
    } finally {
      await backend.close();
    }

    const back = tempDir();
    expect((await cli(["migrate", "--store", url, "--to", back])).code).toBe(0);
    const returned = sessionFile(back);
    expect(readFileSync(returned).equals(original)).toBe(true);
    const reread = await SessionManager.open(returned, { root: back, encryption: { key }, readOnly: true });
    expect(reread.getEntries()).toEqual(entries);
    await reread.close();
  });

  it("migrate --to moves sealed artifacts as they are (same key and id): readable in the database and back, no plaintext", async () => {
    const url = await freshDatabase();
    const root = tempDir();
    const key = randomBytes(32);
    const m = await SessionManager.create("/proj", { root, encryption: { key } });
    m.appendMessage({ role: "user", content: "hello" });
    const saved = m.artifacts!.save(`artifact: ${SECRET}`, { toolType: "bash" });
    await m.close();
    expect((await cli(["migrate", "--root", root, "--to", url])).code).toBe(0);
    const db = rawPool(url);
    const chunks = (await db.query("SELECT id, bytes FROM artifact_chunks")).rows as { id: string; bytes: Buffer }[];
    expect(
      chunks
        .find((c) => c.id === `${saved.id}.bash.log`)!
        .bytes.subarray(0, 5)
        .toString(),
    ).toBe("tsa1\n");
    expect(chunks.some((c) => c.bytes.toString("latin1").includes("tangerine"))).toBe(false);
    const backend = PostgresBackend.of(url);
    try {
      const inDb = await SessionManager.open(m.sessionId, { store: backend, encryption: { key }, readOnly: true });
      expect(inDb.artifacts!.getText(saved.id)).toBe(`artifact: ${SECRET}`);
      await inDb.close();
    } finally {
      await backend.close();
    }
    const back = tempDir();
    expect((await cli(["migrate", "--store", url, "--to", back])).code).toBe(0);
    const reread = await SessionManager.open(sessionFile(back), { root: back, encryption: { key }, readOnly: true });
    expect(reread.artifacts!.getText(saved.id)).toBe(`artifact: ${SECRET}`);
    await reread.close();
  });

  it("migrate --to refuses an encrypted session with keyed blobs (images): KEY_REQUIRED, nothing written (they would dangle)", async () => {
    const url = await freshDatabase();
    const root = tempDir();
    const m = await SessionManager.create("/proj", { root, encryption: { key: randomBytes(32) } });
    m.appendMessage({
      role: "user",
      content: [
        { type: "text", text: SECRET },
        { type: "image", data: makePng(64, 64, 3).toString("base64"), mimeType: "image/png" },
      ],
    });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "noted" }] });
    await m.close();
    const before = readFileSync(m.sessionFile!);
    expect(before.toString("utf8")).toContain("blob:hmac-sha256:");

    const run = await cli(["migrate", "--root", root, "--to", url, "--json"]);
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain("KEY_REQUIRED");
    expect(readFileSync(m.sessionFile!).equals(before)).toBe(true); // the source is left as it was
    const db = rawPool(url);
    // Refused before anything was written: the schema itself was not created, or holds no row.
    const made = (await db.query("SELECT to_regclass('entries') IS NOT NULL AS made")).rows[0].made;
    if (made) {
      expect((await db.query("SELECT count(*)::int AS n FROM entries")).rows[0].n).toBe(0);
      expect((await db.query("SELECT count(*)::int AS n FROM sessions")).rows[0].n).toBe(0);
    }
  });

  it("verify --store reports an encrypted session it cannot read as a finding and checks the others (no abort)", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    try {
      const sealed = await SessionManager.create("/proj", { store: backend, encryption: { key: randomBytes(32) } });
      sealed.appendMessage({ role: "user", content: SECRET });
      await sealed.close();
      const plain = await SessionManager.create("/proj", { store: backend });
      plain.appendMessage({ role: "user", content: "hello", timestamp: 1 });
      await plain.close();
    } finally {
      await backend.close();
    }
    const run = await cli(["verify", "--store", url, "--json"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(1);
    const findings = run.records.filter((r) => r.type === "finding");
    expect(findings).toEqual([expect.objectContaining({ kind: "unreadable", message: expect.stringContaining("KEY_REQUIRED") })]);
    expect(run.records.at(-1)).toMatchObject({ type: "summary", sessions: 2, entries: 1 });
  });
});
