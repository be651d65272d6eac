import type { PoolClient } from "./pg-client.ts";
import { columnText } from "./column-text.ts";

/**
 * Bytes of one spilled tool output (artifact) indexed: the whole of it up to this bound (the file
 * tree's too); only a larger output's rest is not searchable. @default 16 MiB
 */
export const MAX_ARTIFACT_BYTES = 16 << 20;

const ARTIFACT_URL = /artifact:\/\/(\d{1,15})/g;

/** The artifact numbers a tool result's text points to (`artifact://007` is artifact 7), in order, once each. */
export function artifactNumbers(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(ARTIFACT_URL), (m) => String(Number(m[1]!))))];
}

/**
 * The heads (MAX_ARTIFACT_BYTES, as UTF-8 text a column holds) of the spilled tool outputs that
 * `wanted` names: for each session, artifact numbers; artifact `n` is the session's artifact whose
 * id is `<n>.<tool>.log`, as the artifacts directory of a file session names it. One statement;
 * the chunks are cut server-side. Keyed `<session id>\0<n>`; an absent one is absent.
 */
export async function artifactHeads(client: PoolClient, wanted: ReadonlyMap<string, readonly string[]>): Promise<Map<string, Buffer>> {
  const sessions: string[] = [];
  const numbers: string[] = [];
  for (const [sessionId, list] of wanted) {
    for (const n of list) {
      sessions.push(sessionId);
      numbers.push(n);
    }
  }
  const heads = new Map<string, Buffer>();
  if (sessions.length === 0) return heads;
  const { rows } = await client.query<{ sid: string; num: string; head: Buffer | null }>(
    `SELECT w.sid, w.num,
            (SELECT substring(string_agg(substring(c.bytes FROM 1 FOR $3), ''::bytea ORDER BY c.n) FROM 1 FOR $3)
               FROM artifact_chunks c WHERE c.session_id = a.session_id AND c.id = a.id AND c.n < $3) AS head
       FROM unnest($1::text[], $2::text[]) AS w (sid, num)
       JOIN LATERAL (SELECT a.session_id, a.id FROM artifacts a
                      WHERE a.session_id = w.sid AND starts_with(a.id, w.num || '.') AND right(a.id, 4) = '.log'
                      ORDER BY a.id LIMIT 1) a ON true`,
    [sessions, numbers, MAX_ARTIFACT_BYTES],
  );
  for (const row of rows) if (row.head !== null) heads.set(`${row.sid}\0${row.num}`, row.head);
  return heads;
}

/** `text` with the artifacts it points to appended (each up to MAX_ARTIFACT_BYTES); bytes read added to `counter`. */
export function withArtifactHeads(
  sessionId: string,
  text: string,
  heads: ReadonlyMap<string, Buffer>,
  counter: { artifactBytes: number },
): string {
  let body = text;
  for (const n of artifactNumbers(text)) {
    const head = heads.get(`${sessionId}\0${n}`);
    if (head === undefined) continue;
    counter.artifactBytes += head.length;
    body += `\n${columnText(head.toString("utf8"))}`;
  }
  return body;
}
