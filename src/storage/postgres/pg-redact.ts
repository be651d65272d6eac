import type { PgEntry, PgStore } from "./db/index.ts";
import type { SessionHeader } from "../../format/types.ts";
import type { RedactionCounts, SecretRedactor } from "../../prepare/redact-secrets.ts";
import { headerEncryption } from "../../crypto/line-cipher.ts";
import { parseHeader, storedLineRow } from "./pg-lines.ts";
import { withLeasedSession } from "./pg-rewrite.ts";
import type { StoreRedactOptions, StoreRedactReport } from "../store-drivers.ts";

/** What `redactPgSession` found and did to one database session's entry rows (the seam's report). */
export type PgRedactReport = StoreRedactReport;

export type PgRedactOptions = StoreRedactOptions;

/** The line with its secrets replaced by markers, or null when none was found (or the line is not JSON). */
function redactLine(line: string, redactor: SecretRedactor, found: RedactionCounts): string | null {
  if (!redactor.mayMatchJson(line)) return null;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null; // a damaged row is reported by open and left as it is
  }
  const counts: RedactionCounts = new Map();
  const out = redactor.redactValue(value, counts);
  if (counts.size === 0) return null;
  for (const [rule, n] of counts) found.set(rule, (found.get(rule) ?? 0) + n);
  return JSON.stringify(out);
}

/**
 * Scrubs the entry rows of database session `id`: under its lease (`SESSION_LOCKED` while a writer
 * has it open), every row's secrets become markers and the rows found with any are rewritten, with
 * the header, in ONE transaction fenced by the lease (`rewriteSession`): readers see the old rows or
 * the new. Rows without a secret keep their exact line; a session with none is not written at all,
 * so a second run changes nothing (markers are never matched again). A dry run reads without the
 * lease and writes nothing. An encrypted session's rows are ciphertext: reported `encrypted`, not scanned.
 * The header is not scanned (as for files).
 */
export async function redactPgSession(
  store: PgStore,
  name: string,
  id: string,
  redactor: SecretRedactor,
  options: PgRedactOptions = {},
): Promise<PgRedactReport> {
  const found: RedactionCounts = new Map();
  const scan = (header: SessionHeader, rows: readonly PgEntry[]) => {
    if (headerEncryption(header) !== null) return null;
    let entries = 0;
    const lines = rows.map((row) => {
      const redacted = redactLine(row.line, redactor, found);
      if (redacted !== null) entries++;
      return redacted;
    });
    return { entries, lines };
  };
  const report = (status: PgRedactReport["status"], entries = 0): PgRedactReport => ({ id, status, found, entries });
  if (options.dryRun === true) {
    const { session, entries: rows } = await store.loadSession(id);
    const scanned = scan(parseHeader(session.header, `${name}#${id}`), rows);
    if (scanned === null) return report("encrypted");
    return report(scanned.entries > 0 ? "planned" : "clean", scanned.entries);
  }
  return withLeasedSession(store, id, name, async ({ session, header, rows, token }) => {
    const scanned = scan(header, rows);
    if (scanned === null) return report("encrypted");
    if (scanned.entries === 0) return report("clean");
    await options.beforeRewrite?.(
      session.header,
      rows.map((r) => r.line),
    );
    const lines = rows.map((row, i) => storedLineRow(scanned.lines[i] ?? row.line, row));
    await store.rewriteSession(id, token, session.header, lines);
    return report("redacted", scanned.entries);
  });
}
