import type { TestProject } from "vitest/node";
import { findPgBin, type PgCluster, startCluster, stopCluster } from "./pg-cluster.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's throwaway cluster, or null when no PostgreSQL server can be had (its suites skip). */
    pgCluster: PgCluster | null;
  }
}

const inCi = () => process.env.CI === "true" || process.env.CI === "1";

/**
 * One throwaway PostgreSQL cluster per vitest run (initdb into a temp dir, a free port on 127.0.0.1),
 * stopped and removed after the run. Without PostgreSQL binaries the PostgreSQL suites skip with one
 * loud line, except under `CI=true`, where that fails the run (`.ci/run` installs the package).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const binDir = findPgBin();
  let cluster: PgCluster | null = null;
  let reason = "no initdb under /usr/lib/postgresql/*/bin (or $TS_PG_BIN)";
  if (binDir !== null) {
    try {
      cluster = await startCluster(binDir);
    } catch (err) {
      reason = `the throwaway cluster did not start: ${(err as Error).message.split("\n")[0]}`;
    }
  }
  if (cluster === null) {
    if (inCi()) throw new Error(`CI=true but PostgreSQL cannot be started: ${reason}`);
    console.warn(`SKIPPED: PostgreSQL not available (${reason}); the PostgreSQL suites did not run`);
    project.provide("pgCluster", null);
    return async () => {};
  }
  const started = cluster;
  project.provide("pgCluster", started);
  return () => stopCluster(started);
}
