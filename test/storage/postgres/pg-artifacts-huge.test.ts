import { createHash } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresBackend, SessionManager } from "../../../src/index.ts";
import { runTs } from "../../support/child.ts";
import { freshDatabase, pgCluster } from "../../support/postgres.ts";
import { rawPool } from "../../support/pg-sessions.ts";

const HOLDER = join(import.meta.dirname, "helpers/pg-artifacts-holder.ts");
const backends: PostgresBackend[] = [];
afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

// The one test at the real limit (heavy on a shared machine): pg hands a bytea column to V8 as one
// hex string of 2 × size + 2 characters, so one value over 0x1fffffe8 / 2 bytes (~256 MiB) cannot
// be read as one. The streaming mechanism itself is tested with a tiny chunk size elsewhere.
const SIZE = 270 * 1024 * 1024;

describe.skipIf(!pgCluster())("PostgreSQL artifacts past V8's longest string", () => {
  it("a 270 MiB artifact is stored, and opened read-only in another process, byte-exact and without a crash", async () => {
    const url = await freshDatabase();
    const backend = PostgresBackend.of(url);
    backends.push(backend);
    const m = await SessionManager.create("/w", { store: backend });
    m.appendMessage({ role: "user", content: "go", timestamp: 1 });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 });
    await m.close();

    // a 251-byte period (prime): chunk boundaries never line up with it
    const period = Buffer.from(Array.from({ length: 251 }, (_, i) => (i * 7 + 3) & 0xff));
    const piece = Buffer.alloc(251 * 4096, period);
    const hash = createHash("sha256");
    function* content() {
      for (let left = SIZE; left > 0; left -= piece.length) {
        const part = piece.subarray(0, Math.min(left, piece.length));
        hash.update(part);
        yield part;
      }
    }
    const pg = await backend.connect();
    expect(await pg.artifacts.put(m.sessionId, "0.bash.log", content())).toBe(SIZE);
    const expected = hash.digest("hex");

    const run = await runTs(HOLDER, [JSON.stringify({ url, sessionId: m.sessionId, readOnly: true, hash: "0.bash.log", exit: true })]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`hash ${expected} ${SIZE}\n`);
    // the artifact was never held whole: the opening process stayed smaller than it
    const maxRss = Number(/^maxrss (\d+)$/m.exec(run.stdout)![1]);
    expect(maxRss).toBeLessThan(SIZE);

    // stored as rows the client can read one at a time: none near the limit
    const db = rawPool(url);
    const { rows } = await db.query(
      "SELECT count(*)::int AS n, max(octet_length(bytes))::int AS largest, sum(octet_length(bytes))::float8 AS total FROM artifact_chunks",
    );
    expect(rows[0]).toEqual({ n: 270, largest: 1024 * 1024, total: SIZE });
  });
});
