import type { SessionRow } from "./index-statements.ts";
import type { SqliteDatabase, SqliteStatement } from "./sqlite.ts";

/** What a refresh compares a file's stat with. */
export type KnownRow = Pick<SessionRow, "sid" | "path" | "dev" | "ino" | "size" | "mtime_ms" | "offset">;

const COLUMNS = "sid, path, dev, ino, size, mtime_ms, offset";

/**
 * The indexed state of every file, kept between refreshes of one connection: a refresh that finds
 * nothing changed then costs one stat per file and no query over the whole `sessions` table. The
 * copy is read again whenever another connection has committed since (`PRAGMA data_version`), and
 * this connection's own commits update the rows they touched. It only steers which files are looked
 * at: each is looked at again under the write lock before anything is written.
 */
export class KnownFiles {
  private rows: Map<string, KnownRow> | null = null;
  private version: number | null = null;
  private readonly dataVersion: SqliteStatement;
  private readonly all: SqliteStatement;
  private readonly one: SqliteStatement;

  constructor(db: SqliteDatabase) {
    this.dataVersion = db.prepare("PRAGMA data_version");
    this.all = db.prepare(`SELECT ${COLUMNS} FROM sessions`);
    this.one = db.prepare(`SELECT ${COLUMNS} FROM sessions WHERE path = ?`);
  }

  /** The rows by path: the kept copy while no other connection has committed, else read anew. */
  get(): Map<string, KnownRow> {
    const version = Number(this.dataVersion.get()?.data_version);
    if (this.rows === null || version !== this.version) {
      const rows = this.all.all() as unknown as KnownRow[];
      this.rows = new Map(rows.map((r) => [r.path, r]));
      this.version = version;
    }
    return this.rows;
  }

  /** After this connection committed changes to `paths` (its own commits leave `data_version` as it was). */
  update(paths: Iterable<string>): void {
    if (this.rows === null) return;
    for (const path of paths) {
      const row = this.one.get(path) as KnownRow | undefined;
      if (row === undefined) this.rows.delete(path);
      else this.rows.set(path, row);
    }
  }

  /** Forgets the copy (after a rollback or a wholesale change such as a rebuild). */
  invalidate(): void {
    this.rows = null;
  }
}
