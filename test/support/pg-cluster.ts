import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A throwaway PostgreSQL cluster: its own data dir under the OS temp dir, a free port on 127.0.0.1. */
export interface PgCluster {
  /** Superuser URL of the `postgres` database (trust authentication). */
  url: string;
  port: number;
  dataDir: string;
  binDir: string;
}

/** The newest installed PostgreSQL binary directory that has `initdb`, or null. */
export function findPgBin(): string | null {
  if (process.env.TS_PG_BIN) return existsSync(join(process.env.TS_PG_BIN, "initdb")) ? process.env.TS_PG_BIN : null;
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return null;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? null : join(base, versions[0]!, "bin");
}

const isRoot = () => process.getuid?.() === 0;

/** Runs a server binary, as the `postgres` user when we are root (initdb refuses root). */
async function pgRun(binDir: string, tool: string, args: string[]): Promise<string> {
  const file = join(binDir, tool);
  const [cmd, argv] = isRoot() ? ["runuser", ["-u", "postgres", "--", file, ...args]] : [file, args];
  const { stdout } = await run(cmd, argv, { encoding: "utf8" });
  return stdout;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** initdb + pg_ctl start into a fresh temp dir; `stopCluster` removes it. */
export async function startCluster(binDir: string): Promise<PgCluster> {
  const dataDir = mkdtempSync(join(tmpdir(), "ts-pg-"));
  try {
    if (isRoot()) {
      const { stdout: uid } = await run("id", ["-u", "postgres"], { encoding: "utf8" });
      const { stdout: gid } = await run("id", ["-g", "postgres"], { encoding: "utf8" });
      chownSync(dataDir, Number(uid.trim()), Number(gid.trim()));
    }
    await pgRun(binDir, "initdb", ["-D", dataDir, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
    const port = await freePort();
    const cluster = { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, dataDir, binDir };
    await pgCtl(cluster, ["start"]);
    return cluster;
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

function serverOptions(cluster: PgCluster): string {
  return `-p ${cluster.port} -k ${cluster.dataDir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
}

async function pgCtl(cluster: PgCluster, args: string[]): Promise<void> {
  const log = join(cluster.dataDir, "log");
  try {
    await pgRun(cluster.binDir, "pg_ctl", ["-D", cluster.dataDir, "-o", serverOptions(cluster), "-l", log, "-w", ...args]);
  } catch (err) {
    const tail = existsSync(log) ? readFileSync(log, "utf8").slice(-1500) : "(no log)";
    throw new Error(`pg_ctl ${args.join(" ")} failed: ${(err as Error).message}\n${tail}`);
  }
}

/**
 * Restarts the server (`pg_ctl stop -m <mode>`, then start): every connection is cut; the server
 * accepts again when this resolves. `immediate` stops without a checkpoint (like a crash: the start
 * replays the WAL); `fast` shuts down cleanly. A start refused while the old server's last backends
 * still hold its shared memory is tried again (a few times).
 */
export async function restartCluster(cluster: PgCluster, mode: "fast" | "immediate" = "fast"): Promise<void> {
  await pgCtl(cluster, ["-m", mode, "stop"]);
  for (let attempt = 1; ; attempt++) {
    try {
      await pgCtl(cluster, ["start"]);
      return;
    } catch (err) {
      if (attempt >= 5) throw err;
    }
  }
}

/** Stops the server (`pg_ctl stop`) or starts it again, keeping its data dir: an outage as long as the caller wants. */
export async function serverDown(cluster: PgCluster, mode: "fast" | "immediate" = "fast"): Promise<void> {
  await pgRun(cluster.binDir, "pg_ctl", ["-D", cluster.dataDir, "-m", mode, "-w", "stop"]);
}

export async function serverUp(cluster: PgCluster): Promise<void> {
  await pgCtl(cluster, ["start"]);
}

/** `pg_ctl stop -m fast`, then the data dir is removed. */
export async function stopCluster(cluster: PgCluster): Promise<void> {
  try {
    await pgRun(cluster.binDir, "pg_ctl", ["-D", cluster.dataDir, "-m", "fast", "-w", "stop"]);
  } finally {
    rmSync(cluster.dataDir, { recursive: true, force: true });
  }
}

/** Runs one SQL command through `psql` against `url` (client-independent; used for CREATE/DROP DATABASE). */
export async function psql(binDir: string, url: string, sql: string): Promise<string> {
  const { stdout } = await run(join(binDir, "psql"), ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql], {
    encoding: "utf8",
  });
  return stdout;
}
