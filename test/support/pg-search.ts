import { randomUUID } from "node:crypto";
import type { PgLine, PgStore } from "../../src/storage/postgres/db/index.ts";
import { PgSessionIndex } from "../../src/storage/postgres/pg-index.ts";
import { headerLine } from "./pg-sessions.ts";

let n = 0;
/** A message line: `role` with `text` (an assistant's may carry thinking and a model). */
export function message(role: string, text: string, extra: { thinking?: string; model?: string; timestamp?: string } = {}): PgLine {
  const entryId = (++n).toString(16).padStart(8, "0");
  const content: unknown[] = [{ type: "text", text }];
  if (extra.thinking !== undefined) content.unshift({ type: "thinking", thinking: extra.thinking });
  const msg: Record<string, unknown> = { role, content };
  if (extra.model !== undefined) msg.model = extra.model;
  const timestamp = extra.timestamp ?? "2026-11-20T10:00:00.000Z";
  const line = JSON.stringify({ type: "message", id: entryId, parentId: null, timestamp, message: msg });
  return { line, entryId, kind: "message" };
}

/** A session with `lines` appended (its lease kept for further appends). */
export async function session(store: PgStore, lines: PgLine[], cwd = "/home/demo/project") {
  const id = randomUUID();
  const { token } = await store.createSession(headerLine(id, cwd), { lease: { holder: "t", ttlMs: 600_000 } });
  let next = 1;
  const append = async (more: PgLine[]) => {
    await store.appendBatch(id, token!, next, more);
    next += more.length;
  };
  if (lines.length > 0) await append(lines);
  return { id, token: token!, append };
}

export async function openIndex(store: PgStore, readOnly = false) {
  return PgSessionIndex.open(store.pool, { readOnly, name: "pg" });
}

export const bytesOf = (lines: PgLine[]) => lines.reduce((sum, l) => sum + Buffer.byteLength(l.line) + 1, 0);
