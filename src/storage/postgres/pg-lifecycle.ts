import type { LifecycleDriver, TrashEntry } from "../../lifecycle/lifecycle-driver.ts";
import type { SessionFlags } from "../../lifecycle/lifecycle-driver.ts";
import {
  lifecycleRows,
  purgeSessionRow,
  restoreSessionRow,
  sessionState,
  sessionStates,
  setLifecycleFlag,
  trashSessionRow,
  type PgLifecycleRow,
} from "./db/lifecycle-rows.ts";
import type { SessionInfo } from "../../session/session-info.ts";
import type { ResolvedSessionManagerOptions } from "../../session/session-options.ts";
import type { PostgresBackend } from "./pg-backend.ts";

/** The database's lifecycle: the `session_lifecycle` table; a trashed session keeps its rows until purged. */
export class PgLifecycle implements LifecycleDriver {
  readonly location: string;

  constructor(
    private readonly backend: PostgresBackend,
    private readonly options: ResolvedSessionManagerOptions,
  ) {
    this.location = `${backend.name} session_lifecycle`;
  }

  private async pool() {
    return (await this.backend.connect()).pool;
  }

  private entryOf(row: PgLifecycleRow): TrashEntry {
    return {
      trashId: row.sessionId,
      sessionId: row.sessionId,
      cwd: row.cwd,
      from: `${this.backend.name}#${row.sessionId}`,
      trashedAt: row.trashedAt!,
      bytes: row.bytes,
    };
  }

  async flags(): Promise<Map<string, SessionFlags>> {
    const flags = new Map<string, SessionFlags>();
    for (const r of await lifecycleRows(await this.pool()))
      flags.set(r.sessionId, { pinned: r.pinned, archived: r.archived, trashed: r.trashedAt !== null });
    return flags;
  }

  async setFlag(session: SessionInfo, flag: keyof SessionFlags, value: boolean): Promise<void> {
    if (flag === "trashed") throw new Error("the trash is set by trash() and restore()");
    await setLifecycleFlag(await this.pool(), session.id, flag, value);
  }

  async bytesOf(session: SessionInfo): Promise<number> {
    return (await sessionState(await this.pool(), session.id))?.bytes ?? 0;
  }

  async isLive(session: SessionInfo): Promise<boolean> {
    return (await sessionState(await this.pool(), session.id))?.live === true;
  }

  async states(sessions: readonly SessionInfo[]): Promise<Map<string, { bytes: number; live: boolean }>> {
    return sessionStates(
      await this.pool(),
      sessions.map((s) => s.id),
    );
  }

  async trash(session: SessionInfo, _at?: Date, check?: () => Promise<void>): Promise<TrashEntry> {
    // No lock to hold here: the facts are checked just before the statement that takes the lease.
    await check?.();
    return this.entryOf(await trashSessionRow(await this.pool(), session.id));
  }

  async listTrash(): Promise<TrashEntry[]> {
    return (await lifecycleRows(await this.pool())).filter((r) => r.trashedAt !== null).map((r) => this.entryOf(r));
  }

  async restore(entry: TrashEntry): Promise<SessionInfo> {
    await restoreSessionRow(await this.pool(), entry.sessionId);
    return this.backend.resolve(entry.sessionId, "/", this.options);
  }

  async purge(entry: TrashEntry): Promise<void> {
    await purgeSessionRow(await this.pool(), entry.sessionId);
  }
}
