import { TranscriptStoreError } from "../errors.ts";

/** The part of `node:sqlite` the index uses (typed here so the library compiles without it). */
export interface SqliteStatement {
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: unknown[]): Record<string, unknown> | undefined;
  all(...params: unknown[]): Record<string, unknown>[];
}

export interface SqliteDatabase {
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  close(): void;
}

export type SqliteOpen = (path: string) => SqliteDatabase;

let loaded: Promise<SqliteOpen> | null = null;

/** True for the one warning Node 22 prints when `node:sqlite` loads (the feature is marked experimental there). */
function isSqliteExperimentalWarning(warning: unknown, rest: unknown[]): boolean {
  const message = warning instanceof Error ? warning.message : String(warning);
  const type = warning instanceof Error ? warning.name : typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string })?.type;
  return type === "ExperimentalWarning" && /SQLite/.test(message);
}

/**
 * Loads `node:sqlite` once, lazily: a runtime without it (Node before 22.5) imports the library
 * and uses everything but the index. Its `ExperimentalWarning` is swallowed while the module loads,
 * and only it: every other warning passes through, and the hook is removed right after.
 * A runtime without the module → `INDEX_UNAVAILABLE`.
 */
export function loadSqlite(specifier = "node:sqlite"): Promise<SqliteOpen> {
  if (specifier !== "node:sqlite") return importSqlite(specifier);
  loaded ??= importSqlite(specifier).catch((err) => {
    loaded = null;
    throw err;
  });
  return loaded;
}

/** `specifier`: the module to load (another one only in tests, to meet a runtime without it). */
async function importSqlite(specifier: string): Promise<SqliteOpen> {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    if (isSqliteExperimentalWarning(warning, rest)) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    const sqlite = (await import(specifier)) as { DatabaseSync: new (path: string) => SqliteDatabase };
    return (path: string) => new sqlite.DatabaseSync(path);
  } catch (err) {
    const message = `This runtime has no ${specifier} (Node 22.19+ and Bun have it): ${(err as Error).message}`;
    throw new TranscriptStoreError("INDEX_UNAVAILABLE", message, { cause: err });
  } finally {
    process.emitWarning = emitWarning;
  }
}
