import { randomBytes } from "node:crypto";
import { afterAll, inject } from "vitest";
import { type PgCluster, psql } from "./pg-cluster.ts";

export { findPgBin, restartCluster, serverDown, serverUp, startCluster, stopCluster } from "./pg-cluster.ts";

/**
 * The run's cluster (started once by the global setup), or null when no PostgreSQL could start here
 * (pg-global-setup.ts then prints one `SKIPPED:` line; under `CI=true` it fails the run instead, so a CI
 * run never skips): wrap suites in `describe.skipIf(!pgCluster())`.
 */
export function pgCluster(): PgCluster | null {
  return inject("pgCluster");
}

const made: Array<{ cluster: PgCluster; name: string }> = [];

afterAll(async () => {
  for (const { cluster, name } of made.splice(0)) {
    await psql(cluster.binDir, cluster.url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
});

/** A fresh empty database `ts_<random>` on `cluster` (the run's by default), dropped after the file's tests. */
export async function freshDatabase(cluster: PgCluster | null = pgCluster()): Promise<string> {
  if (cluster === null) throw new Error("no PostgreSQL cluster in this run");
  const name = `ts_${randomBytes(6).toString("hex")}`;
  await psql(cluster.binDir, cluster.url, `CREATE DATABASE ${name}`);
  made.push({ cluster, name });
  return cluster.url.replace(/\/[^/]*$/, `/${name}`);
}
