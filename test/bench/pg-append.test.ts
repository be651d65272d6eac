import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendMessages, appendRaw, appendThroughManager, rawSessionRow, recordBatches } from "../../bench/helpers/pg-append.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { PostgresBackend } from "../../src/storage/postgres/pg-backend.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";

const cluster = pgCluster();

async function stored(client: pg.Client, sessionId: string): Promise<{ seqs: number[]; messages: unknown[]; transactions: number }> {
  const { rows } = await client.query<{ seq: string; line: string }>("SELECT seq, line FROM entries WHERE session_id = $1 ORDER BY seq", [
    sessionId,
  ]);
  const { rows: tx } = await client.query<{ n: string }>("SELECT count(DISTINCT xmin::text) AS n FROM entries WHERE session_id = $1", [
    sessionId,
  ]);
  return { seqs: rows.map((r) => Number(r.seq)), messages: rows.map((r) => JSON.parse(r.line).message), transactions: Number(tx[0]!.n) };
}

describe.skipIf(!cluster)("bench: the PostgreSQL append baseline", () => {
  let url: string;
  let client: pg.Client;

  beforeAll(async () => {
    url = await freshDatabase();
    client = new pg.Client({ connectionString: url });
    await PostgresBackend.of(url)
      .connect()
      .then((store) => store.close()); // the schema
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
  });

  it("writes the same rows as the manager, in as many transactions as the manager's recorded batches", async () => {
    const messages = appendMessages(600);
    const backend = PostgresBackend.of(url);
    try {
      const batches = recordBatches(await backend.connect());
      const manager = await SessionManager.create("/bench/test", { store: backend });
      await appendThroughManager(manager, messages, 250);
      await manager.close();
      expect(batches.reduce((a, b) => a + b, 0)).toBe(600);
      for (const size of batches) expect(size).toBeLessThanOrEqual(250); // a flush ends a batch

      await rawSessionRow(client, "raw-test");
      await appendRaw(client, "raw-test", messages, batches);
      const ours = await stored(client, manager.sessionId);
      const raw = await stored(client, "raw-test");
      expect(raw.seqs).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
      expect(raw.seqs).toEqual(ours.seqs);
      expect(raw.messages).toEqual(messages);
      expect(ours.messages).toEqual(messages);
      expect(ours.transactions).toBe(batches.length);
      expect(raw.transactions).toBe(batches.length);
    } finally {
      await backend.close();
    }
  });

  it("refuses batch sizes that do not add up to the messages", async () => {
    await rawSessionRow(client, "raw-bad");
    await expect(appendRaw(client, "raw-bad", appendMessages(10), [4, 4])).rejects.toThrow(/do not add up/);
  });
});
