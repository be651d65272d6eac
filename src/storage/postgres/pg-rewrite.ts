import type { PgEntry, PgSession, PgStore } from "./db/index.ts";
import type { SessionHeader } from "../../format/types.ts";
import { leaseHolder } from "./pg-lease-holder.ts";
import { parseHeader } from "./pg-lines.ts";

/** How long a maintenance rewrite holds a session's lease at most (it renews none: one read, one transaction). @default 60000 */
export const REWRITE_LEASE_MS = 60_000;

/** A session as a rewrite reads it, under its lease. */
export interface LeasedSession {
  session: PgSession;
  header: SessionHeader;
  rows: PgEntry[];
  /** The lease's fencing token: `store.rewriteSession(id, token, …)` commits all or nothing under it. */
  token: number;
}

/**
 * Runs `fn` over session `id` read under its lease (`SESSION_LOCKED` while a writer holds it): what
 * it reads is every committed row, and nobody appends until the lease is given back (always, even
 * when `fn` throws). The rewrite `fn` commits is fenced by the token: one transaction, all or nothing.
 */
export async function withLeasedSession<T>(store: PgStore, id: string, name: string, fn: (s: LeasedSession) => Promise<T>): Promise<T> {
  const token = await store.leases.acquire(id, leaseHolder(), REWRITE_LEASE_MS);
  try {
    const { session, entries } = await store.loadSession(id);
    return await fn({ session, header: parseHeader(session.header, `${name}#${id}`), rows: entries, token });
  } finally {
    await store.leases.release(id, token).catch(() => false);
  }
}
