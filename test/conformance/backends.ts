import { afterEach, describe } from "vitest";
import { PostgresBackend, type SessionManagerOptions, type StorageBackend } from "../../src/index.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

/** One backend the conformance suite runs against: a fresh, empty store per call of `options`. */
export interface BackendUnderTest {
  name: "file" | "postgres";
  /** True when sessions live in files (the published suite's `ConformanceBackend.sessionFiles`). */
  sessionFiles: boolean;
  /** Options naming a fresh, empty store (closed after the test). */
  options(): Promise<SessionManagerOptions & { root: string }>;
  /** The CLI's store flags naming the same store as `options` (`--root`, and `--store` for a database). */
  cliArgs(options: SessionManagerOptions): string[];
}

/** The library's PostgreSQL backend class: ours from src/, or the built package's (a consumer's view). */
export interface PostgresBackendClass {
  of(url: string): StorageBackend & { close(): Promise<void> };
}

/** The database URL behind a postgres backend's options (for tests that read its rows). */
const urls = new WeakMap<object, string>();

/** The URL of the database a postgres `options()` names (null for the file tree). */
export function databaseUrlOf(options: SessionManagerOptions): string | null {
  return typeof options.store === "object" && options.store !== null ? (urls.get(options.store) ?? null) : null;
}

const opened: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const backend of opened.splice(0)) await backend.close();
});

const file: BackendUnderTest = {
  name: "file",
  sessionFiles: true,
  async options() {
    return { root: tempDir("ts-conf-") };
  },
  cliArgs: (options) => ["--root", options.root!],
};

function postgresOf(Backend: PostgresBackendClass): BackendUnderTest {
  return {
    name: "postgres",
    sessionFiles: false,
    async options() {
      const url = await freshDatabase();
      const backend = Backend.of(url);
      opened.push(backend);
      urls.set(backend, url);
      // root still names where nothing of a database session is written (asserted by the suite)
      return { store: backend, root: tempDir("ts-conf-pg-") };
    },
    cliArgs: (options) => ["--root", options.root!, "--store", databaseUrlOf(options)!],
  };
}

/**
 * Runs `suite` once per backend. The PostgreSQL run needs the test cluster (started by the global
 * setup); without one it is skipped with the global setup's loud line (a failure under CI=true).
 * `Postgres`: the backend class to build it with (by default src/'s; the published suite's runner
 * passes the built package's, so both sides of the seam are the package a consumer installs).
 */
export function describeBackends(
  title: string,
  suite: (backend: BackendUnderTest) => void,
  Postgres: PostgresBackendClass = PostgresBackend,
): void {
  for (const backend of [file, postgresOf(Postgres)]) {
    describe.skipIf(backend.name === "postgres" && pgCluster() === null)(`${title} [${backend.name}]`, () => suite(backend));
  }
}
