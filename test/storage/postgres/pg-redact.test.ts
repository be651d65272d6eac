import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../../src/index.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";
import { rawPool } from "../../support/pg-sessions.ts";
import { tempDir } from "../../support/temp-dir.ts";

const GH = "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";
const backends: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

describe.skipIf(!pgCluster())("redact on the PostgreSQL backend", () => {
  it("stores markers in the entry rows and artifact chunks, never the secret; memory keeps what was given", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    backends.push(backend);
    const root = tempDir();
    const m = await SessionManager.create(root, { root, store: backend, redact: "secrets" });
    const id = m.appendMessage({ role: "user", content: `token ${GH}` });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }] });
    m.artifacts!.save(`export GITHUB_TOKEN=${GH}\n`, { toolType: "bash" });
    m.artifacts!.saveAgentOutput("reviewer", `found ${GH}`);
    await m.flush();
    expect((m.getEntry(id)!.message as { content: string }).content).toBe(`token ${GH}`);
    await m.close();
    const rows = (await rawPool(url).query("SELECT line FROM entries ORDER BY seq")).rows as Array<{ line: string }>;
    const all = rows.map((r) => r.line).join("\n");
    expect(all).not.toContain(GH);
    expect(all).toMatch(/token \[REDACTED:github-token:[0-9a-f]{8}\]/);
    const chunks = (await rawPool(url).query("SELECT bytes FROM artifact_chunks")).rows as Array<{ bytes: Buffer }>;
    const stored = chunks.map((r) => r.bytes.toString("utf8")).join("\n");
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(stored).not.toContain(GH);
    expect(stored.match(/\[REDACTED:github-token:[0-9a-f]{8}\]/g)?.length).toBeGreaterThanOrEqual(2);
  });
});
