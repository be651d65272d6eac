import { afterEach, describe } from "vitest";
import { PostgresBackend, type SessionManagerOptions } from "../../src/index.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

/** One backend the conformance suite runs against: a fresh, empty store per call of `options`. */
export interface BackendUnderTest {
  name: "file" | "postgres";
  /** Options naming a fresh, empty store (closed after the test). */
  options(): Promise<SessionManagerOptions>;
}

const opened: PostgresBackend[] = [];

afterEach(async () => {
  for (const backend of opened.splice(0)) await backend.close();
});

const file: BackendUnderTest = {
  name: "file",
  async options() {
    return { root: tempDir("ts-conf-") };
  },
};

const postgres: BackendUnderTest = {
  name: "postgres",
  async options() {
    const backend = PostgresBackend.of(await freshDatabase());
    opened.push(backend);
    // root still names where nothing of a database session is written (asserted by the suite)
    return { store: backend, root: tempDir("ts-conf-pg-") };
  },
};

/**
 * Runs `suite` once per backend. The PostgreSQL run needs the test cluster (started by the global
 * setup); without one it is skipped with the global setup's loud line (a failure under CI=true).
 */
export function describeBackends(title: string, suite: (backend: BackendUnderTest) => void): void {
  for (const backend of [file, postgres]) {
    describe.skipIf(backend.name === "postgres" && pgCluster() === null)(`${title} [${backend.name}]`, () => suite(backend));
  }
}
