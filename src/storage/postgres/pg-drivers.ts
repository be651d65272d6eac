import { accountPgSession, accountPgStore, appendPgLedger, readPgLedger } from "./db/accounting.ts";
import type { PgStore } from "./db/index.ts";
import { withClient } from "./db/transaction.ts";
import { blobHashOf } from "../../blob/blob-ref.ts";
import type { AccountingDriver, StoreFinding, StoreStats } from "../store-drivers.ts";

/** The PostgreSQL store's accounting driver (`supports.accounting`): its rows, its `usage_ledger` table. */
export function pgAccounting(connect: () => Promise<PgStore>): AccountingDriver {
  const pool = async () => (await connect()).pool;
  return {
    async accountStore(onSession) {
      const scan = await accountPgStore(await pool(), onSession);
      const spaces = scan.accounts.map((a) => {
        const id = a.sessionId!;
        const artifacts = scan.artifacts.get(id) ?? 0;
        return { id, cwd: a.cwd!, path: null, kinds: a.kinds, blobRefs: a.blobRefs, artifacts, quarantine: 0, backups: 0 };
      });
      return { spaces, accounts: scan.accounts, blobSizes: scan.blobSizes };
    },
    accountSession: async (ref) => accountPgSession(await pool(), ref),
    readLedger: async () => readPgLedger(await pool()),
    appendLedger: async (rows, deletedAt) => appendPgLedger(await pool(), rows, deletedAt),
  };
}

/** `stats` of a PostgreSQL store: its sessions, lines, blobs and references. */
export async function pgStats(store: PgStore): Promise<StoreStats> {
  const one = async (sql: string) =>
    (await withClient(store.pool, "Reading statistics", (c) => c.query<Record<string, string>>(sql))).rows[0]!;
  const sessions = await one("SELECT count(*) AS n FROM sessions");
  const lines = await one("SELECT coalesce(sum(octet_length(line) + 1), 0) AS bytes FROM entries");
  const blobs = await one("SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM blobs");
  const refs = await one(
    `SELECT count(*) AS n, count(DISTINCT r.sha256) AS blobs, coalesce(sum(b.size), 0) AS logical
       FROM blob_refs r JOIN blobs b USING (sha256)`,
  );
  const physical = await one("SELECT coalesce(sum(size), 0) AS bytes FROM blobs WHERE sha256 IN (SELECT sha256 FROM blob_refs)");
  return {
    sessions: Number(sessions.n),
    sessionBytes: Number(lines.bytes),
    blobs: Number(blobs.n),
    blobBytes: Number(blobs.bytes),
    references: Number(refs.n),
    referencedBlobs: Number(refs.blobs),
    dedupRatio: Number(physical.bytes) > 0 ? Number(refs.logical) / Number(physical.bytes) : 1,
  };
}

/** The blob half of `verify` on a PostgreSQL store: referenced blobs absent, blobs not hashing to their name. */
export async function pgVerifyBlobs(store: PgStore, rehash: boolean): Promise<StoreFinding[]> {
  const findings: StoreFinding[] = [];
  const { rows: missing } = await withClient(store.pool, "Verifying blob refs", (c) =>
    c.query<{ session_id: string; sha256: string }>(
      "SELECT r.session_id, r.sha256 FROM blob_refs r LEFT JOIN blobs b USING (sha256) WHERE b.sha256 IS NULL ORDER BY 1, 2",
    ),
  );
  for (const r of missing)
    findings.push({ kind: "blob-missing", session: r.session_id, message: `blob ${r.sha256} is referenced but absent` });
  if (!rehash) return findings;
  let after = "";
  for (;;) {
    const { rows } = await withClient(store.pool, "Re-hashing blobs", (c) =>
      c.query<{ sha256: string; bytes: Buffer }>("SELECT sha256, bytes FROM blobs WHERE sha256 > $1 ORDER BY sha256 LIMIT 64", [after]),
    );
    if (rows.length === 0) break;
    for (const row of rows) {
      if (blobHashOf(row.bytes) !== row.sha256) {
        findings.push({ kind: "blob-corrupt", session: null, message: `blob ${row.sha256} does not hash to its name` });
      }
    }
    after = rows[rows.length - 1]!.sha256;
  }
  return findings;
}
