// The server the PostgreSQL scenarios run against: a throwaway cluster (test/support/pg-cluster.ts:
// initdb into a temp dir, a free port on 127.0.0.1, fsync=off), or the one `--url` names. Each
// scenario works in a database of its own, dropped afterwards.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { findPgBin, startCluster, stopCluster } from "../../test/support/pg-cluster.ts";

/** A server for the bench run; `stop()` stops and removes a cluster the bench started (a `--url` server is left alone). */
export interface BenchServer {
  url: string;
  stop: () => Promise<void>;
}

export async function benchServer(url?: string): Promise<BenchServer> {
  if (url !== undefined) return { url, stop: async () => {} };
  const binDir = findPgBin();
  if (binDir === null) {
    throw new Error("--store postgres: no initdb under /usr/lib/postgresql/*/bin (or $TS_PG_BIN); pass --url postgres://…");
  }
  const cluster = await startCluster(binDir);
  return { url: cluster.url, stop: () => stopCluster(cluster) };
}

async function admin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh empty database on the server of `url`; resolves to its URL and a function that drops it. */
export async function scratchDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `ts_bench_${randomBytes(5).toString("hex")}`;
  await admin(url, (c) => c.query(`CREATE DATABASE ${name}`));
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return {
    url: parsed.toString(),
    drop: () => admin(url, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** Runs `fn` with a connected client of `url` (one connection, ended afterwards). */
export function withPgClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  return admin(url, fn);
}
