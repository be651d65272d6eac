import { dirname, join, resolve } from "node:path";
import { spaceRows, spaceTotals, type SessionSpace, type SpaceGrouping, type SpaceRow, type SpaceTotals } from "../accounting/du-report.ts";
import type { SessionAccount } from "../accounting/session-account.ts";
import {
  groupUsage,
  dropCopies,
  mergeLedger,
  type LedgerRow,
  type UsageGroup,
  type UsageGrouping,
  type UsageWindow,
} from "../accounting/usage-report.ts";
import { SHIPPED_PRICES } from "../accounting/price-table-data.ts";
import { priceRows, type PriceTable } from "../accounting/price-table.ts";
import type { UsageProblem, UsageRow } from "../accounting/usage-rows.ts";
import { TranscriptStoreError } from "../errors.ts";
import { io } from "../io.ts";
import { type AccountingCache, openAccountingCache } from "../search/accounting-cache.ts";
import type { ListIndexMode } from "../session/discovery.ts";
import type { SessionInfo } from "../session/session-info.ts";
import { SessionManager } from "../session/session-manager.ts";
import { resolveSessionManagerOptions, type SessionManagerOptions } from "../session/session-options.ts";
import { requireCapability } from "../storage/capabilities.ts";
import type { AccountingDriver } from "../storage/store-drivers.ts";
import { accountSessionFile, fileBlobSizes, fileSessionSpace, treeBytes } from "./file-accounting.ts";
import { readLedgerFile, usageLedgerPath, appendLedgerFile, type LedgerProblem } from "./usage-ledger-file.ts";

/** Options of the accounting functions: a store as `SessionManager` names one, and where its ledger lives. */
export interface AccountingOptions extends SessionManagerOptions {
  /**
   * The usage ledger file of a file store (deleted sessions' rows). @default `<root>/usage-ledger.jsonl`,
   * `root` being the option, else the blob directory's parent (`<root>/blobs` by default).
   */
  ledgerPath?: string;
  /** Called before each session is read (a CLI reports progress and stops between sessions there). */
  onSession?: (id: string) => void | Promise<void>;
  /**
   * Whether each session's accounting (and the listing) comes from the index, while its file's stat
   * is unchanged (src/search/accounting-cache.ts): as `DiscoveryOptions.listIndex`. @default "auto"
   */
  listIndex?: ListIndexMode;
  /** The index file. @default the one `openSessionIndex` uses for the same tree */
  indexPath?: string;
}

/** Every session of a store accounted for, and its blob store. */
export interface StoreAccounting {
  spaces: SessionSpace[];
  accounts: SessionAccount[];
  blobSizes: Map<string, number>;
}

/**
 * The accounting driver of the store these options name, or null for the file tree (accounted here,
 * from its files). A store that does not declare `accounting` is refused (`NOT_SUPPORTED`).
 */
function driverOf(options: AccountingOptions): AccountingDriver | null {
  const store = resolveSessionManagerOptions(options).store;
  if (store === null) return null;
  requireCapability(store, "accounting");
  return store.accounting!();
}

/** The usage ledger file of a file store. */
export function ledgerPathOf(options: AccountingOptions): string {
  if (options.ledgerPath !== undefined) return resolve(options.ledgerPath);
  if (options.root !== undefined) return usageLedgerPath(resolve(options.root));
  return usageLedgerPath(dirname(resolveSessionManagerOptions(options).blobsDir));
}

/**
 * Reads every session of the store once, streaming (one line, or one batch of rows, in memory at a
 * time): its bytes by kind, the blobs it references, its artifacts, quarantine and backups, its
 * usage rows. Nothing is written. A session file that cannot be read throws `PERSISTENCE_FAILED`,
 * or, with `onWarning`, is reported there and left out (the caller then knows the totals are short).
 */
export async function accountStore(options: AccountingOptions = {}): Promise<StoreAccounting> {
  const driver = driverOf(options);
  if (driver !== null) return driver.accountStore(options.onSession);
  const spaces: SessionSpace[] = [];
  const accounts: SessionAccount[] = [];
  const resolved = resolveSessionManagerOptions(options);
  const listing = new Map<string, string[]>();
  const namesIn = (dir: string) => {
    let names = listing.get(dir);
    if (names === undefined) {
      names = io.readdirSync(dir);
      listing.set(dir, names);
    }
    return names;
  };
  const cache = await openAccountingCache({
    root: options.root,
    sessionsDir: resolved.sessionsDir,
    indexPath: options.indexPath,
    mode: options.listIndex,
    onWarning: options.onWarning,
  });
  try {
    await accountFiles(await SessionManager.listAll({ ...options, includeArchived: true }), options, cache, namesIn, spaces, accounts);
  } finally {
    cache?.close();
  }
  return { spaces, accounts, blobSizes: fileBlobSizes(resolved.blobsDir) };
}

/** Each listed session file accounted for (from the index's cache when it holds the file as it is). */
async function accountFiles(
  infos: SessionInfo[],
  options: AccountingOptions,
  cache: AccountingCache | null,
  namesIn: (dir: string) => string[],
  spaces: SessionSpace[],
  accounts: SessionAccount[],
): Promise<void> {
  for (const info of infos) {
    await options.onSession?.(info.id);
    try {
      const account = cache === null ? accountSessionFile(info.path) : cache.account(info.path, accountSessionFile);
      if (account === null) continue; // removed since it was listed
      spaces.push(fileSessionSpace(info.path, account, info, namesIn(dirname(info.path))));
      accounts.push(account);
    } catch (err) {
      // With a warning handler, a session that cannot be read is reported and the rest counted.
      if (options.onWarning === undefined || !(err instanceof TranscriptStoreError)) throw err;
      options.onWarning({ code: err.code, message: err.message, path: info.path });
    }
  }
}

/** `du`: the store's rows (by session or cwd, largest first, at most `top`) and its totals. */
export async function storeSpace(
  options: AccountingOptions & { by?: SpaceGrouping; top?: number } = {},
): Promise<{ rows: SpaceRow[]; totals: SpaceTotals }> {
  const { spaces, blobSizes } = await accountStore(options);
  const rows = spaceRows(spaces, blobSizes, options.by ?? "session");
  const totals = spaceTotals(spaces, blobSizes);
  // the file tree's trash and spools beside its sessions (a store with an accounting driver counts its own)
  if (driverOf(options) === null) Object.assign(totals, storeLeftovers(dirname(resolveSessionManagerOptions(options).sessionsDir)));
  return { rows: options.top === undefined ? rows : rows.slice(0, options.top), totals };
}

/** Bytes of a file store's trash and of the unbundle spools under its root (`.unbundle-…tmp/`). */
function storeLeftovers(root: string): { trash: number; spools: number } {
  let spools = 0;
  let names: string[] = [];
  try {
    names = io.readdirSync(root) as string[];
  } catch {
    // no root: nothing beside the sessions
  }
  for (const name of names) if (name.startsWith(".unbundle-") && name.endsWith(".tmp")) spools += treeBytes(join(root, name));
  return { trash: treeBytes(join(root, "trash")), spools };
}

/** The usage report of a store: live sessions' rows and the ledger of deleted ones, grouped. */
export interface UsageReport {
  groups: UsageGroup[];
  total: UsageGroup;
  /** Usage values that were not numbers (they count 0), with their session, entry and field. */
  problems: UsageProblem[];
  /** Damaged lines of the ledger file (left in place). */
  ledgerProblems: LedgerProblem[];
  /** Rows left out as copies of a call another session holds (a fork copies its source's entries). */
  copies: number;
}

/**
 * Every ledger row of the store: each live session's (oldest session first), then the deleted
 * sessions' not also live; a call a fork copied counts once (`copies`: the rows left out for it).
 */
export async function storeLedger(
  options: AccountingOptions = {},
): Promise<{ rows: LedgerRow[]; copies: number; problems: UsageProblem[]; ledgerProblems: LedgerProblem[] }> {
  const { accounts } = await accountStore(options);
  const live: LedgerRow[] = [];
  const problems: UsageProblem[] = [];
  // Oldest session first: a call a fork copied is then kept in the session that made it.
  const created = (a: SessionAccount) =>
    a.created === null ? Number.POSITIVE_INFINITY : Date.parse(a.created) || Number.POSITIVE_INFINITY;
  const ordered = [...accounts].sort((a, b) => created(a) - created(b) || ((a.sessionId ?? "") < (b.sessionId ?? "") ? -1 : 1));
  for (const a of ordered) {
    for (const row of a.usage) live.push({ ...row, deleted: false, deletedAt: null });
    problems.push(...a.usageProblems);
  }
  const driver = driverOf(options);
  const ledger = driver !== null ? { rows: await driver.readLedger(), problems: [] } : readLedgerFile(ledgerPathOf(options));
  const { rows, copies } = dropCopies(mergeLedger(live, ledger.rows));
  return { rows, copies, problems, ledgerProblems: ledger.problems };
}

/**
 * `usage`: tokens and cost by session, model, UTC day or cwd, inside a time window. Calls whose cost
 * the agent did not record (imported Claude Code and Codex calls) are priced from `prices` (default:
 * the shipped, dated table; `overlayPrices` lays a file over it), else counted `unpricedCalls`.
 */
export async function storeUsage(
  options: AccountingOptions & UsageWindow & { by?: UsageGrouping; prices?: PriceTable } = {},
): Promise<UsageReport> {
  const ledger = await storeLedger(options);
  const { copies, problems, ledgerProblems } = ledger;
  const rows = priceRows(ledger.rows, options.prices ?? SHIPPED_PRICES);
  const { groups, total } = groupUsage(rows, options.by ?? "session", { since: options.since, until: options.until });
  return { groups, total, copies, problems, ledgerProblems };
}

/** What `recordDeletedUsage` did. */
export interface RecordedUsage {
  sessionId: string;
  /** The session's usage rows. */
  rows: number;
  /** Of them, written now (the others were recorded before). */
  recorded: number;
  problems: UsageProblem[];
}

/**
 * Records a session's usage rows in the store's ledger of deleted sessions, so `usage` still
 * counts them (flagged deleted) once the session is gone. Call it before purging the session;
 * calling it again (a retry) writes nothing twice. `ref`: the session file (file tree) or id
 * (database). `SESSION_NOT_FOUND` when there is no such session.
 */
export async function recordDeletedUsage(ref: string, options: AccountingOptions = {}): Promise<RecordedUsage> {
  const now = (options.now ?? (() => new Date()))();
  const driver = driverOf(options);
  let account: SessionAccount | null;
  if (driver !== null) {
    account = await driver.accountSession(ref);
    if (account === null) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session ${ref}`);
    const recorded = await driver.appendLedger(account.usage, now);
    return { sessionId: ref, rows: account.usage.length, recorded, problems: account.usageProblems };
  }
  account = accountSessionFile(resolve(ref));
  if (account === null || account.sessionId === null)
    throw new TranscriptStoreError("SESSION_NOT_FOUND", `No session file ${ref}`, { path: ref });
  const rows: UsageRow[] = account.usage;
  const recorded = appendLedgerFile(ledgerPathOf(options), rows, now.toISOString());
  return { sessionId: account.sessionId, rows: rows.length, recorded, problems: account.usageProblems };
}
