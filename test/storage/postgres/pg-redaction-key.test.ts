import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, redactForSharing, SessionManager } from "../../../src/index.ts";
import { runTs } from "../../support/child.ts";
import { cli } from "../../support/cli.ts";
import { expectCode } from "../../support/error-code.ts";
import { rawPool } from "../../support/pg-sessions.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";
import { tempDir } from "../../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/pg-redact-writer-child.ts");
const GH = "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";
const MARKER = /\[REDACTED:github-token:[0-9a-f]{8}\]/g;

const backends: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

// Skipped only where no PostgreSQL can start: one loud SKIPPED line, and under CI=true a failed run instead (support/pg-global-setup.ts).
describe.skipIf(!pgCluster())("one redaction key per PostgreSQL store", () => {
  it("two processes with separate roots on one database make identical markers; one key row, no key file", async () => {
    const url = await freshDatabase();
    const db = rawPool(url);
    const roots = [tempDir(), tempDir()];
    const runs = await Promise.all(roots.map((root) => runTs(CHILD, [url, root, `token ${GH}`])));
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const lines = (await db.query<{ line: string }>("SELECT line FROM entries ORDER BY session_id")).rows.map((r) => r.line);
    expect(lines).toHaveLength(2);
    const markers = lines.map((l) => l.match(MARKER));
    expect(markers[0]).toHaveLength(1);
    expect(markers[1]).toEqual(markers[0]);
    expect(lines.join("\n")).not.toContain(GH);
    expect((await db.query("SELECT count(*)::int AS n FROM redaction_key")).rows[0].n).toBe(1);
    for (const root of roots) expect(existsSync(join(root, "redaction.key"))).toBe(false);
  }, 60_000);

  it("a given redactionKey (or $TRANSCRIPT_STORE_REDACTION_KEY_FILE) wins over the store's: file store and database agree", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    backends.push(backend);
    const key = randomBytes(32);
    const markerOf = async (options: Parameters<typeof SessionManager.create>[1]) => {
      const m = await SessionManager.create("/p", { redact: "secrets", ...options });
      m.appendMessage({ role: "user", content: `token ${GH}` });
      await m.close();
      const reopened = await SessionManager.open(m.sessionFile ?? m.sessionId, { ...options, redact: undefined, readOnly: true });
      const text = JSON.stringify(reopened.getEntries());
      await reopened.close();
      return text.match(MARKER)![0];
    };
    const inDb = await markerOf({ root: tempDir(), store: backend, redactionKey: key });
    const inFiles = await markerOf({ root: tempDir(), redactionKey: key });
    expect(inFiles).toBe(inDb);
    const keyFile = join(tempDir(), "shared.key");
    writeFileSync(keyFile, `${key.toString("hex")}\n`);
    process.env.TRANSCRIPT_STORE_REDACTION_KEY_FILE = keyFile;
    try {
      expect(await markerOf({ root: tempDir(), store: backend })).toBe(inDb);
      expect(await markerOf({ root: tempDir() })).toBe(inDb);
      // shared output (export, views, bundles) is redacted with that key too
      expect(redactForSharing(`token ${GH}`, { root: tempDir() }).match(MARKER)![0]).toBe(inDb);
    } finally {
      delete process.env.TRANSCRIPT_STORE_REDACTION_KEY_FILE;
    }
    // the database's own key is another: a writer given no key makes other markers
    expect(await markerOf({ root: tempDir(), store: backend })).not.toBe(inDb);
    await expectCode(SessionManager.create("/p", { redact: "secrets", redactionKey: randomBytes(16), store: backend }), "INVALID_OPTION");
  }, 60_000);

  it("export and the views of a database session redact with the database's key: their markers equal the stored ones", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    backends.push(backend);
    const redacting = await SessionManager.create("/p", { root: tempDir(), store: backend, redact: "secrets" });
    redacting.appendMessage({ role: "user", content: `token ${GH}` });
    await redacting.close();
    const stored = (await rawPool(url).query<{ line: string }>("SELECT line FROM entries")).rows[0]!.line.match(MARKER)![0];
    const plain = await SessionManager.create("/p", { store: backend });
    plain.appendMessage({ role: "user", content: `token ${GH}` });
    await plain.close();
    const exported = await cli(["export", plain.sessionId, "--store", url, "--root", tempDir()]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).not.toContain(GH);
    expect(exported.stdout.match(MARKER)![0]).toBe(stored);
    const view = await cli(["export", plain.sessionId, "--to", "markdown", "--store", url, "--root", tempDir()]);
    expect(view.code, view.stderr).toBe(0);
    expect(view.stdout.match(MARKER)![0]).toBe(stored);
    const bundleFile = join(tempDir(), "b.tar");
    const bundled = await cli(["bundle", plain.sessionId, "--store", url, "--root", tempDir(), "-o", bundleFile]);
    expect(bundled.code, bundled.stderr).toBe(0);
    const tarText = readFileSync(bundleFile, "latin1");
    expect(tarText).not.toContain(GH);
    expect(tarText.match(MARKER)![0]).toBe(stored);
    for (const agent of ["claude-code", "codex"]) {
      const converted = await cli(["export", plain.sessionId, "--to", agent, "--store", url, "--root", tempDir()]);
      expect(converted.code, converted.stderr).toBe(0);
      expect(converted.stdout).not.toContain(GH);
      expect(converted.stdout.match(MARKER)![0]).toBe(stored);
    }
  });
});
