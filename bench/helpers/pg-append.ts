// The append workload of the PostgreSQL scenarios, shared by the one-process scenario and the
// 8-process children: ~2 KB agent messages appended through SessionManager (flushed every
// `flushEvery` and at the end), and the raw baseline — the same messages as JSONL rows written by
// one batched INSERT per batch, in the batch sizes the manager's own commits used.
import type pg from "pg";
import type { PgStore } from "../../src/storage/postgres/db/index.ts";
import type { SessionManager } from "../../src/session/session-manager.ts";
import { agentMessage, prng } from "../workload.ts";

/** Appends between two `flush()` calls in the append scenarios. */
export const FLUSH_EVERY = 1000;

/** `count` ~2 KB agent messages (seeded). */
export function appendMessages(count: number, seed = 7): Array<{ role: string }> {
  const random = prng(seed);
  return Array.from({ length: count }, (_, i) => agentMessage(random, i, 2048) as { role: string });
}

/** Records the number of lines of every `appendBatch` the store commits (each is one transaction). */
export function recordBatches(store: PgStore): number[] {
  const sizes: number[] = [];
  const original = store.appendBatch.bind(store);
  store.appendBatch = (sessionId, token, firstSeq, lines, blobs) => {
    sizes.push(lines.length);
    return original(sessionId, token, firstSeq, lines, blobs);
  };
  return sizes;
}

/** Ours: every message through `appendMessage`, `flush()` every `flushEvery` and at the end; returns ms. */
export async function appendThroughManager(manager: SessionManager, messages: ReadonlyArray<{ role: string }>, flushEvery: number) {
  const start = performance.now();
  for (let i = 0; i < messages.length; i++) {
    manager.appendMessage(messages[i]!);
    if ((i + 1) % flushEvery === 0) await manager.flush();
  }
  await manager.flush();
  return performance.now() - start;
}

/** A bare session row for the raw baseline's entries (they reference it). */
export async function rawSessionRow(client: pg.Client, id: string): Promise<void> {
  const header = JSON.stringify({ type: "session", version: 3, id, timestamp: new Date().toISOString(), cwd: "/bench/raw" });
  await client.query("INSERT INTO sessions (id, cwd, created, header) VALUES ($1, '/bench/raw', now(), $2)", [id, header]);
}

const RAW_INSERT = `INSERT INTO entries (session_id, seq, entry_id, kind, line)
  SELECT $1, s, e, 'message', l FROM unnest($2::bigint[], $3::text[], $4::text[]) AS u(s, e, l)`;

/**
 * The baseline: the same messages serialized as JSONL entries (`JSON.stringify`, as the file
 * bench's baseline) and written in batches of `sizes[k]` rows, each one INSERT (its own
 * transaction) on one connection. Returns ms.
 */
export async function appendRaw(
  client: pg.Client,
  sessionId: string,
  messages: ReadonlyArray<{ role: string }>,
  sizes: readonly number[],
): Promise<number> {
  if (sizes.reduce((a, b) => a + b, 0) !== messages.length) throw new Error("batch sizes do not add up to the messages");
  const start = performance.now();
  let i = 0;
  let parent: string | null = null;
  for (const size of sizes) {
    const seqs: number[] = [];
    const ids: string[] = [];
    const lines: string[] = [];
    for (const end = i + size; i < end; i++) {
      const id = (0x10000000 + i).toString(16);
      const line = JSON.stringify({ type: "message", id, parentId: parent, timestamp: new Date().toISOString(), message: messages[i] });
      seqs.push(i + 1);
      ids.push(id);
      lines.push(line);
      parent = id;
    }
    await client.query(RAW_INSERT, [sessionId, seqs, ids, lines]);
  }
  return performance.now() - start;
}
