import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../src/index.ts";
import { cli } from "../support/cli.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

/*
 * Outside review of issue 32 #4: `redact --store --backup` names its file after the session id, and
 * an imported session's id comes from a transcript. Only its file-safe form names the backup: an id
 * like `x/../../escaped` writes inside the current directory, never outside it.
 */

const GH = "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";
const EVIL = "x/../../escaped";
const backends: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

describe.skipIf(!pgCluster())("redact --store --backup names the backup by the file-safe id", () => {
  it("an id holding / and .. writes its backup inside the current directory", async () => {
    const url = await freshDatabase();
    const scratch = tempDir("ts-redact-name-");
    const root = join(scratch, "files");
    const sm = await SessionManager.create("/p", { root });
    sm.appendMessage({ role: "user", content: `my token is ${GH}` });
    await sm.close();
    const transcript = join(scratch, "in.jsonl");
    writeFileSync(transcript, readFileSync(sm.sessionFile!, "utf8").replaceAll(sm.sessionId, EVIL));
    const imported = await cli(["import", "--store", url, transcript, "--json"], { cwd: scratch });
    expect(imported.code, imported.stderr).toBe(0);
    const backend = PostgresBackend.of(url);
    backends.push(backend);

    const cwd = join(scratch, "a", "b");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(cwd, { recursive: true });
    const run = await cli(["redact", "--store", url, "--backup", "--json", EVIL], { cwd });
    expect(run.code, run.stderr).toBe(0);
    const done = run.records.find((r) => r.type === "session")!;
    expect(done.status).toBe("redacted");
    expect(existsSync(join(scratch, "a", "escaped.pre-redact.jsonl"))).toBe(false);
    expect(done.backup).toBe(join(cwd, "x_______escaped.pre-redact.jsonl"));
    expect(readdirSync(cwd)).toEqual(["x_______escaped.pre-redact.jsonl"]);
    expect(readFileSync(done.backup, "utf8")).toContain(GH);
  });
});
