import { readFileSync } from "node:fs";
import pg from "pg";
import { afterEach, describe } from "vitest";
import { PostgresBackend, type SessionManager, type SessionManagerOptions, type StorageBackend } from "../../src/index.ts";
import type { Capability, Supports } from "../../src/storage/capabilities.ts";
import { fileBackend } from "../../src/storage/file/file-backend.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";
import { TEST_ONLY_BACKENDS } from "./test-backends.ts";

/**
 * One backend the conformance tests run against: a fresh, empty store per call of `options`. A
 * test that needs a capability says so (`describeBackends(…, { needs })`) and runs only where the
 * backend declares it; what differs by backend is keyed by capability, never by name.
 */
export interface BackendUnderTest {
  /** Shown in group names only. */
  name: string;
  /** The backend's manifest (its `supports`). */
  supports: Supports;
  /** True when sessions live in files (the published suite's `ConformanceBackend.sessionFiles`). */
  sessionFiles: boolean;
  /** Options naming a fresh, empty store (closed after the test). */
  options(): Promise<SessionManagerOptions & { root: string }>;
  /**
   * The CLI's store flags naming the same store as `options` (`--root`, and `--store` for a
   * database); null for a backend the CLI cannot reach (a test-only backend is not registered in it).
   */
  cliArgs: ((options: SessionManagerOptions) => string[]) | null;
  /** Session `m`'s entry lines as the store holds them (after the header), read by the backend's own means. */
  storedLines(m: SessionManager, options: SessionManagerOptions): Promise<Buffer[]>;
  /** A ref `open` and `exportSnapshot` take that names no session of a fresh store. */
  missingRef: string;
}

/** The library's PostgreSQL backend class: ours from src/, or the built package's (a consumer's view). */
export interface PostgresBackendClass {
  of(url: string): StorageBackend & { close(): Promise<void> };
}

/** The database URL behind a postgres backend's options (for its own `storedLines` and CLI flags). */
const urls = new WeakMap<object, string>();

/** The URL of the database a postgres `options()` names (null for the file tree). */
export function databaseUrlOf(options: SessionManagerOptions): string | null {
  return typeof options.store === "object" && options.store !== null ? (urls.get(options.store) ?? null) : null;
}

const opened: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const backend of opened.splice(0)) await backend.close();
});

/** A file's lines after its header, split at `\n`. */
function fileLines(path: string): Buffer[] {
  const bytes = readFileSync(path);
  const lines: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    const end = bytes.indexOf(0x0a, at);
    lines.push(bytes.subarray(at, end));
    at = end + 1;
  }
  return lines.slice(1);
}

const file: BackendUnderTest = {
  name: "file",
  supports: fileBackend.supports,
  sessionFiles: true,
  async options() {
    return { root: tempDir("ts-conf-") };
  },
  cliArgs: (options) => ["--root", options.root!],
  storedLines: async (m) => fileLines(m.sessionFile!),
  missingRef: "/nonexistent/x.jsonl",
};

function postgresOf(Backend: PostgresBackendClass): BackendUnderTest {
  return {
    name: "postgres",
    supports: Backend.of("postgres://manifest.invalid/none").supports, // never connects: the manifest only
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
    async storedLines(m, options) {
      const client = new pg.Client({ connectionString: databaseUrlOf(options)! });
      await client.connect();
      try {
        const { rows } = await client.query<{ line: string }>("SELECT line FROM entries WHERE session_id = $1 ORDER BY seq", [m.sessionId]);
        return rows.map((r) => Buffer.from(r.line, "utf8"));
      } finally {
        await client.end();
      }
    },
    missingRef: "nope",
  };
}

export interface DescribeBackendsOptions {
  /** Capabilities the tests need: a backend that does not declare them all is not run. */
  needs?: Capability[];
  /** The tests run the CLI: a backend it cannot reach (`cliArgs` null) is not run. */
  cli?: boolean;
  /** The PostgreSQL backend class to build it with (by default src/'s; the published suite's runner passes the built package's). */
  Postgres?: PostgresBackendClass;
}

/**
 * Runs `suite` once per backend that declares what it needs: the file tree, PostgreSQL and the
 * test-only backends (test-backends.ts). The PostgreSQL run needs the test cluster (started by the
 * global setup); without one it is skipped with the global setup's loud line (a failure under CI=true).
 */
export function describeBackends(
  title: string,
  suite: ((backend: BackendUnderTest) => void) | DescribeBackendsOptions,
  more: ((backend: BackendUnderTest) => void) | PostgresBackendClass = {} as PostgresBackendClass,
): void {
  // describeBackends(title, suite, Postgres?) or describeBackends(title, { needs, cli }, suite)
  const [run, how]: [(backend: BackendUnderTest) => void, DescribeBackendsOptions] =
    typeof suite === "function" ? [suite, "of" in more ? { Postgres: more } : {}] : [more as (backend: BackendUnderTest) => void, suite];
  const { needs = [], cli = false, Postgres = PostgresBackend } = how;
  for (const backend of [file, postgresOf(Postgres), ...TEST_ONLY_BACKENDS]) {
    if (!needs.every((c) => backend.supports[c]) || (cli && backend.cliArgs === null)) continue;
    describe.skipIf(backend.name === "postgres" && pgCluster() === null)(`${title} [${backend.name}]`, () => run(backend));
  }
}
