import { createHash, randomBytes } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../src/index.ts";
import { cli } from "../support/cli.ts";
import { rawPool } from "../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

const GH = "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";
const MARKER = /\[REDACTED:github-token:[0-9a-f]{8}\]/g;
const backends: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

/** Every entry row, session row and artifact chunk (lease columns aside), as a digest. */
const digest = async (db: ReturnType<typeof rawPool>) =>
  createHash("sha256")
    .update(
      JSON.stringify([
        (await db.query("SELECT * FROM entries ORDER BY session_id, seq")).rows,
        (await db.query("SELECT id, header, first_message, last_seq, body_bytes, generation, message_count FROM sessions ORDER BY id"))
          .rows,
        (await db.query("SELECT session_id, id, n, bytes FROM artifact_chunks ORDER BY session_id, id, n")).rows,
      ]),
    )
    .digest("hex");

// Skipped only where no PostgreSQL can start: one loud SKIPPED line, and under CI=true a failed run instead (support/pg-global-setup.ts).
describe.skipIf(!pgCluster())("transcript-store redact --store (PostgreSQL)", () => {
  it("dry-run writes nothing; a run rewrites each session's rows in one transaction (backup first); a rerun changes nothing", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    backends.push(backend);
    const db = rawPool(url);
    const cwd = tempDir();
    const leaky = await SessionManager.create("/p", { store: backend });
    leaky.appendMessage({ role: "user", content: `my token is ${GH}` });
    leaky.appendMessage({ role: "assistant", content: [{ type: "text", text: "noted" }] });
    leaky.artifacts!.save(`export GITHUB_TOKEN=${GH}\n`, { toolType: "bash" });
    await leaky.close();
    const clean = await SessionManager.create("/p", { store: backend });
    clean.appendMessage({ role: "user", content: "nothing secret" });
    await clean.close();
    const preImage = (await db.query("SELECT line FROM entries WHERE session_id = $1 ORDER BY seq", [leaky.sessionId])).rows.map(
      (r) => r.line,
    );
    expect(JSON.stringify((await db.query("SELECT first_message FROM sessions")).rows)).toContain(GH);

    const before = await digest(db);
    const dry = await cli(["redact", "--store", url, "--dry-run", "--json"], { cwd });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.records.filter((r) => r.type === "session").map((r) => [r.id, r.status])).toEqual(
      expect.arrayContaining([
        [leaky.sessionId, "planned"],
        [clean.sessionId, "clean"],
      ]),
    );
    expect(await digest(db)).toBe(before);

    const run = await cli(["redact", "--store", url, "--backup", "--json"], { cwd });
    expect(run.code, run.stderr).toBe(0);
    const done = run.records.find((r) => r.id === leaky.sessionId)!;
    expect(done).toMatchObject({ status: "redacted", entries: 1, found: { "github-token": 1 }, artifacts: 1 });
    expect(run.records.find((r) => r.id === clean.sessionId)).toMatchObject({ status: "clean", backup: null });
    const all = JSON.stringify([
      (await db.query("SELECT * FROM entries")).rows,
      (await db.query("SELECT first_message, header FROM sessions")).rows,
      (await db.query("SELECT convert_from(bytes, 'UTF8') AS text FROM artifact_chunks")).rows,
    ]);
    expect(all).not.toContain(GH);
    expect(all.match(MARKER)!.length).toBeGreaterThanOrEqual(3); // the row, its preview, the artifact
    // the backup holds the session as it was (header and rows), 0600
    const backup = join(cwd, `${leaky.sessionId}.pre-redact.jsonl`);
    expect(done.backup).toBe(backup);
    const header = (await db.query("SELECT header FROM sessions WHERE id = $1", [leaky.sessionId])).rows[0].header;
    expect(readFileSync(backup, "utf8")).toBe(`${[header, ...preImage].join("\n")}\n`);
    expect(statSync(backup).mode & 0o777).toBe(0o600);
    // the marker is the database's: a writer redacting on append makes the same one
    const live = await SessionManager.create("/p", { store: backend, redact: "secrets", root: tempDir() });
    live.appendMessage({ role: "user", content: GH });
    await live.close();
    const liveLine = (await db.query("SELECT line FROM entries WHERE session_id = $1", [live.sessionId])).rows[0].line as string;
    expect(liveLine.match(MARKER)![0]).toBe(all.match(MARKER)![0]);

    const settled = await digest(db);
    const again = await cli(["redact", "--store", url, "--backup", "--json"], { cwd });
    expect(again.code, again.stderr).toBe(0);
    expect(again.records.filter((r) => r.type === "session").every((r) => r.status === "clean" && r.backup === null)).toBe(true);
    expect(await digest(db)).toBe(settled);
  });

  it("a session a writer holds is SESSION_LOCKED and a taken backup name OUTPUT_EXISTS: nothing of it rewritten", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    backends.push(backend);
    const db = rawPool(url);
    const cwd = tempDir();
    const m = await SessionManager.create("/p", { store: backend });
    m.appendMessage({ role: "user", content: `token ${GH}` });
    await m.flush();
    const before = await digest(db);
    const locked = await cli(["redact", m.sessionId, "--store", url, "--json"], { cwd });
    expect(locked.code).toBe(1);
    expect(locked.records[0]).toMatchObject({ status: "failed", error: { code: "SESSION_LOCKED" } });
    expect(await digest(db)).toBe(before);
    await m.close();

    writeFileSync(join(cwd, `${m.sessionId}.pre-redact.jsonl`), "mine");
    const taken = await cli(["redact", m.sessionId.slice(0, 20), "--store", url, "--backup", "--json"], { cwd });
    expect(taken.code).toBe(1);
    expect(taken.records[0]).toMatchObject({ status: "failed", error: { code: "OUTPUT_EXISTS" } });
    expect(readFileSync(join(cwd, `${m.sessionId}.pre-redact.jsonl`), "utf8")).toBe("mine");
    expect(JSON.stringify((await db.query("SELECT line FROM entries")).rows)).toContain(GH);
  });

  it("an encrypted session is reported encrypted and left as it is (its rows are ciphertext)", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    backends.push(backend);
    const db = rawPool(url);
    const m = await SessionManager.create("/p", { store: backend, encryption: { key: randomBytes(32) } });
    m.appendMessage({ role: "user", content: `token ${GH}` });
    await m.close();
    const before = await digest(db);
    const run = await cli(["redact", "--store", url, "--json"], { cwd: tempDir() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.records[0]).toMatchObject({ id: m.sessionId, status: "encrypted", entries: 0 });
    expect(await digest(db)).toBe(before);
  });
});
