import { resolve } from "node:path";
import { recordDeletedUsage } from "../maintenance/store-accounting.ts";
import { unsupported } from "../storage/capabilities.ts";
import { TranscriptStoreError } from "../errors.ts";
import type { DiscoveryOptions } from "../session/discovery.ts";
import { readSessionInfo, type SessionInfo } from "../session/session-info.ts";
import {
  resolveSessionManagerOptions,
  type ResolvedSessionManagerOptions,
  type SessionManagerOptions,
} from "../session/session-options.ts";
import { backendOf } from "../storage/backends.ts";
import type { StorageBackend, StorageKind } from "../storage/session-storage.ts";
import type { LifecycleDriver, TrashEntry } from "./lifecycle-driver.ts";
import type { SessionFlags } from "./lifecycle-log.ts";
import { planPrune, type PruneCandidate, type PrunePlan, type SkipReason } from "./prune-plan.ts";
import { loadRetentionConfig, type PrunePolicy, type RetentionConfig } from "./retention-config.ts";
import { storeRootOf } from "./file-lifecycle.ts";

/** What `onBeforePurge` is told about a session about to be deleted for good. */
export interface PurgeInfo extends TrashEntry {
  /** The backend's name, for messages. */
  store: StorageKind;
  /** What the store's accounting opens for this session (`recordDeletedUsage`): its file in the trash, or its id. */
  ref: string;
}

export interface LifecycleOptions extends SessionManagerOptions, DiscoveryOptions {
  /**
   * Called before a session is deleted for good (a usage ledger records its rows here). A throw
   * stops the purge before that session is touched.
   */
  onBeforePurge?: (info: PurgeInfo) => void | Promise<void>;
  /**
   * Called after a session went to the trash (`rm`, `prune`), e.g. so the usage ledger keeps
   * counting its calls while it is out of listings. A throw is reported by the caller; the session
   * stays in the trash (restorable).
   */
  onTrashed?: (info: PurgeInfo) => void | Promise<void>;
  /**
   * Record a session's usage rows in the store's usage ledger when it goes to the trash and again
   * before it is purged (idempotent: each row once), so `usage` keeps counting deleted sessions.
   * `false` leaves that to the caller's hooks. @default true
   */
  usageLedger?: boolean;
  /** The retention config to use instead of the store's file (validated the same way). */
  retention?: Omit<RetentionConfig, "source">;
  /** Where `TRANSCRIPT_STORE_RETENTION` is read. @default process.env */
  env?: NodeJS.ProcessEnv;
}

export interface PurgeOptions {
  /** Trash ids or session ids (prefixes) to purge. */
  refs?: string[];
  /** Every entry. */
  all?: boolean;
  /** Report what would go, delete nothing. */
  dryRun?: boolean;
}

export interface PurgeReport {
  /** Deleted for good (with `dryRun`: would be), oldest first. */
  purged: TrashEntry[];
  bytes: number;
  dryRun: boolean;
}

export interface PruneReport extends PrunePlan {
  /** The trash entries made (none with `dryRun`). */
  trashed: TrashEntry[];
  dryRun: boolean;
  policy: PrunePolicy;
}

/**
 * Pin, archive, trash, restore, purge and prune for one store (the file tree or a database). The
 * state is the store's own: the file tree keeps `<root>/lifecycle.jsonl` and `<root>/trash/`,
 * PostgreSQL a table; none of it lives in (or is lost with) a search index.
 */
export class Lifecycle {
  private constructor(
    readonly options: ResolvedSessionManagerOptions,
    private readonly backend: StorageBackend,
    readonly driver: LifecycleDriver,
    private readonly given: LifecycleOptions,
  ) {}

  static open(options: LifecycleOptions = {}): Lifecycle {
    const resolved = resolveSessionManagerOptions(options);
    const backend = backendOf(resolved);
    const driver = backend.lifecycle?.(resolved);
    if (driver === undefined || !backend.supports.lifecycle) throw unsupported("lifecycle", undefined, backend.name);
    return new Lifecycle(resolved, backend, driver, options);
  }

  /** The store's retention config (`retention` given, else its file, else the defaults). */
  config(): RetentionConfig {
    if (this.given.retention !== undefined) return { ...this.given.retention, source: null };
    return loadRetentionConfig(storeRootOf(this.options), this.given.env ?? process.env);
  }

  private now(): Date {
    return this.options.now();
  }

  /** A session by path (file tree), id, id prefix or file-name prefix, as `SessionManager.resolve`. */
  async resolve(ref: string | SessionInfo, cwd: string = process.cwd()): Promise<SessionInfo> {
    if (typeof ref !== "string") return ref;
    if (this.backend.supports.sessionFiles && ref.endsWith(".jsonl")) {
      const info = readSessionInfo(resolve(cwd, ref));
      if (info === null) throw new TranscriptStoreError("SESSION_NOT_FOUND", `No readable session file at ${resolve(cwd, ref)}`);
      return info;
    }
    return this.backend.resolve(ref, cwd, { ...this.options, roots: this.given.roots });
  }

  /** Flags of every session that has one, by session id. */
  flags(): Promise<Map<string, SessionFlags>> {
    return this.driver.flags();
  }

  private async flag(ref: string | SessionInfo, flag: "pinned" | "archived", value: boolean, cwd?: string): Promise<SessionInfo> {
    const info = await this.resolve(ref, cwd);
    const current = (await this.driver.flags()).get(info.id);
    // Setting what is already set writes nothing: the command is idempotent.
    if ((current?.[flag] ?? false) !== value) await this.driver.setFlag(info, flag, value, this.now());
    return { ...info, [flag]: value };
  }

  pin(ref: string | SessionInfo, cwd?: string): Promise<SessionInfo> {
    return this.flag(ref, "pinned", true, cwd);
  }
  unpin(ref: string | SessionInfo, cwd?: string): Promise<SessionInfo> {
    return this.flag(ref, "pinned", false, cwd);
  }
  archive(ref: string | SessionInfo, cwd?: string): Promise<SessionInfo> {
    return this.flag(ref, "archived", true, cwd);
  }
  unarchive(ref: string | SessionInfo, cwd?: string): Promise<SessionInfo> {
    return this.flag(ref, "archived", false, cwd);
  }

  /**
   * Moves a session (with its artifacts) to the trash. A pinned session is refused
   * (`SESSION_PINNED`, unpin it first), one with a live writer too (`SESSION_LOCKED`).
   */
  async rm(ref: string | SessionInfo, cwd?: string): Promise<TrashEntry> {
    const info = await this.resolve(ref, cwd);
    if ((await this.driver.flags()).get(info.id)?.pinned)
      throw new TranscriptStoreError("SESSION_PINNED", `Session ${info.id} is pinned: unpin it before removing it`);
    return this.trashed(await this.driver.trash(info, this.now()));
  }

  /** The trash, oldest first. */
  listTrash(): Promise<TrashEntry[]> {
    return this.driver.listTrash();
  }

  /** One trash entry by its trash id, or by session id (or a unique prefix of either). */
  async findTrash(ref: string): Promise<TrashEntry> {
    const entries = await this.driver.listTrash();
    const exact = entries.filter((e) => e.trashId === ref || e.sessionId === ref);
    const found = exact.length > 0 ? exact : entries.filter((e) => e.trashId.startsWith(ref) || e.sessionId.startsWith(ref));
    if (found.length === 1) return found[0]!;
    if (found.length === 0) throw new TranscriptStoreError("SESSION_NOT_FOUND", `Nothing in the trash matches "${ref}"`);
    throw new TranscriptStoreError(
      "SESSION_AMBIGUOUS",
      `"${ref}" matches ${found.length} trash entries:\n  ${found.map((e) => e.trashId).join("\n  ")}`,
    );
  }

  private purgeInfo(entry: TrashEntry): PurgeInfo {
    return { ...entry, store: this.backend.kind, ref: this.driver.trashedRef?.(entry) ?? entry.sessionId };
  }

  private async trashed(entry: TrashEntry): Promise<TrashEntry> {
    await this.recordUsage(entry);
    await this.given.onTrashed?.(this.purgeInfo(entry));
    return entry;
  }

  /** The entry's usage rows into the store's ledger (unless `usageLedger: false`). */
  private async recordUsage(entry: TrashEntry): Promise<void> {
    if (this.given.usageLedger === false) return;
    await recordDeletedUsage(this.purgeInfo(entry).ref, this.given);
  }

  /** Puts a trashed session back where it was, byte for byte. */
  async restore(ref: string): Promise<SessionInfo> {
    return this.driver.restore(await this.findTrash(ref), this.now());
  }

  /**
   * Deletes trash entries for good: those named, `all`, or (neither) those older than the
   * retention period (`trash.retainDays`). `onBeforePurge` is called before each.
   */
  async purge(options: PurgeOptions = {}): Promise<PurgeReport> {
    let entries: TrashEntry[];
    if (options.refs !== undefined && options.refs.length > 0) {
      entries = [];
      for (const ref of options.refs) {
        const entry = await this.findTrash(ref);
        if (!entries.includes(entry) && !entries.some((e) => e.trashId === entry.trashId)) entries.push(entry);
      }
    } else if (options.all) entries = await this.driver.listTrash();
    else {
      const cutoff = this.now().getTime() - this.config().trash.retainDays * 86_400_000;
      entries = (await this.driver.listTrash()).filter((e) => e.trashedAt.getTime() <= cutoff);
    }
    const report: PurgeReport = { purged: [], bytes: 0, dryRun: options.dryRun === true };
    for (const entry of entries) {
      if (!report.dryRun) {
        await this.recordUsage(entry);
        await this.given.onBeforePurge?.(this.purgeInfo(entry));
        await this.driver.purge(entry, this.now());
      }
      report.purged.push(entry);
      report.bytes += entry.bytes;
    }
    return report;
  }

  /**
   * Moves what the policy selects to the trash (`policy` given, else the config's `prune`). A
   * pinned session or one with a live writer is never touched; with `dryRun` nothing is.
   */
  async prune(policy?: PrunePolicy, options: { dryRun?: boolean } = {}): Promise<PruneReport> {
    const rules = policy ?? this.config().prune;
    const flags = await this.driver.flags();
    const sessions = await this.backend.list(null, { ...this.options, roots: this.given.roots });
    const listed = sessions.filter((info) => flags.get(info.id)?.trashed !== true);
    const states = (await this.driver.states?.(listed)) ?? null;
    const candidates: PruneCandidate[] = [];
    for (const info of listed) {
      const state = states?.get(info.id) ?? { bytes: await this.driver.bytesOf(info), live: await this.driver.isLive(info) };
      candidates.push({
        id: info.id,
        path: info.path,
        cwd: info.cwd,
        modified: info.modified,
        bytes: state.bytes,
        pinned: flags.get(info.id)?.pinned === true,
        live: state.live,
      });
    }
    const plan = planPrune(candidates, rules, this.now());
    const report: PruneReport = { ...plan, trashed: [], dryRun: options.dryRun === true, policy: rules };
    if (report.dryRun) return report;
    const byPath = new Map(sessions.map((s) => [s.path, s]));
    for (const item of [...plan.remove]) {
      const info = byPath.get(item.session.path)!;
      try {
        // Every fact the plan used is checked again at the moment of the move, under the session's lock.
        const check = async () => {
          if ((await this.driver.flags()).get(item.session.id)?.pinned) throw new PruneSkip("pinned");
          if (!(await this.unchanged(info))) throw new PruneSkip("changed");
        };
        report.trashed.push(await this.trashed(await this.driver.trash(info, this.now(), check)));
      } catch (err) {
        // A writer that started since the plan keeps its session: skipped, not an error.
        const reason =
          err instanceof PruneSkip
            ? err.reason
            : err instanceof TranscriptStoreError && err.code === "SESSION_LOCKED"
              ? "live-writer"
              : null;
        if (reason === null) throw err;
        report.remove.splice(report.remove.indexOf(item), 1);
        report.bytes -= item.session.bytes;
        report.totalAfter += item.session.bytes;
        report.skipped.push({ session: item.session, reason, rule: item.reason });
      }
    }
    return report;
  }

  /** Whether the session is as the plan saw it: same last activity and size, read again now. */
  private async unchanged(planned: SessionInfo): Promise<boolean> {
    let now: SessionInfo | null;
    if (this.backend.supports.sessionFiles) now = readSessionInfo(planned.path);
    else {
      try {
        now = await this.backend.resolve(planned.id, planned.cwd, { ...this.options, roots: this.given.roots });
      } catch (err) {
        if (err instanceof TranscriptStoreError && err.code === "SESSION_NOT_FOUND") return false;
        throw err;
      }
    }
    return now !== null && now.id === planned.id && now.modified.getTime() === planned.modified.getTime() && now.size === planned.size;
  }
}

/** A prune move a re-check stopped (never escapes `prune`). */
class PruneSkip extends Error {
  constructor(readonly reason: SkipReason) {
    super(reason);
  }
}
