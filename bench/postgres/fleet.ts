// `tsx bench/postgres/fleet.ts [--url postgres://…] [--sizes 1000,10000] [--repeats 5] [--entries 12] [--entry-bytes 1500]
//                              [--explain plans]`
// Fleet scale (issue 27): a database grown server-side (fleet-seed.ts) to each size in turn; at each
// size open, list, fork, gc (dry run) and search (openSessionIndex({ store }), after a timed refresh
// of the new sessions) through the library beside the raw SQL doing the same reads (fleet-ops.ts),
// medians of `repeats` samples (the order alternates). Prints each size's ratios and the curve: the
// growth of each time from one size to the next. `--explain <prefix>` writes EXPLAIN (ANALYZE, BUFFERS)
// of the statements at each size to <prefix>-<size>.txt. With --url the bench creates and drops a database of its own.
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import pg from "pg";
import { PgStore } from "../../src/storage/postgres/db/index.ts";
import { openSessionIndex } from "../../src/search/session-index.ts";
import { closeUrlStores } from "../../src/storage/store-url.ts";
import { findPgBin, startCluster, stopCluster } from "../../test/support/pg-cluster.ts";
import { median } from "../stats.ts";
import { explainFleet } from "./fleet-explain.ts";
import { fleetOps } from "./fleet-ops.ts";
import { growFleet, writeTemplates } from "./fleet-seed.ts";

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    sizes: { type: "string", default: "1000,10000" },
    repeats: { type: "string", default: "5" },
    entries: { type: "string", default: "12" },
    "entry-bytes": { type: "string", default: "1500" },
    explain: { type: "string" },
  },
});
const SIZES = values.sizes.split(",").map(Number);
const REPEATS = Number(values.repeats);
if (SIZES.some((n, i) => !Number.isSafeInteger(n) || n < 1000 || (i > 0 && n <= SIZES[i - 1]!))) {
  throw new Error("--sizes: increasing whole numbers of sessions, each ≥ 1000");
}

const binDir = findPgBin();
if (!values.url && !binDir) throw new Error("no PostgreSQL binaries; pass --url");
const cluster = values.url ? null : await startCluster(binDir!);
const admin = new pg.Pool({ connectionString: values.url ?? cluster!.url, max: 1 });
const dbName = `ts_fleet_${randomBytes(4).toString("hex")}`;
await admin.query(`CREATE DATABASE ${dbName}`);
const target = new URL(values.url ?? cluster!.url);
target.pathname = `/${dbName}`;
const url = target.toString();

const store = await PgStore.connect(url, { maxConnections: 4 });
const raw = new pg.Pool({ connectionString: url, max: 2 });
raw.on("error", () => {});
const index = await openSessionIndex({ store: url });

/** Milliseconds per call of `fn`, over enough calls to pass ~200 ms (at least one); throws when it returns 0 (read nothing). */
async function sample(fn: () => Promise<number>, calls: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) if ((await fn()) === 0) throw new Error("read nothing");
  return (performance.now() - t0) / calls;
}

/** How many calls make a sample of ~200 ms (a loaded machine's noise is shorter), from one warm-up call. */
async function callsFor(fn: () => Promise<number>): Promise<number> {
  const ms = await sample(fn, 1);
  return Math.max(1, Math.min(500, Math.round(200 / Math.max(ms, 0.01))));
}

const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(0));
const results = new Map<number, Array<{ name: string; ours: number; raw: number }>>();
try {
  await writeTemplates(store, raw, Number(values.entries), Number(values["entry-bytes"]));
  let had = 0;
  for (const size of SIZES) {
    let t0 = performance.now();
    await growFleet(raw, had, size);
    had = size;
    const grown = performance.now() - t0;
    const { rows } = await raw.query(
      "SELECT pg_database_size(current_database())::float8 AS bytes, sum(body_bytes)::float8 AS body FROM sessions",
    );
    t0 = performance.now();
    const refresh = await index.refresh();
    const refreshed = performance.now() - t0;
    // what autovacuum does soon after a refresh this size (its statistics steer the search plan)
    await raw.query("ANALYZE search_sessions, search_entries");
    console.log(
      `\n## ${size} sessions: generated in ${(grown / 1000).toFixed(1)} s; database ${(rows[0].bytes / 1e6).toFixed(0)} MB,` +
        ` entry lines ${(rows[0].body / 1e6).toFixed(0)} MB; index refresh of ${refresh.sessionsAdded} new sessions` +
        ` (${refresh.entriesIndexed} texts) ${(refreshed / 1000).toFixed(1)} s\n`,
    );
    const row: Array<{ name: string; ours: number; raw: number }> = [];
    for (const op of fleetOps(store, raw, index)) {
      const calls = Math.max(await callsFor(op.ours), await callsFor(op.raw));
      const ours: number[] = [];
      const base: number[] = [];
      for (let r = 0; r < REPEATS; r++) {
        if (r % 2 === 0) {
          ours.push(await sample(op.ours, calls));
          base.push(await sample(op.raw, calls));
        } else {
          base.push(await sample(op.raw, calls));
          ours.push(await sample(op.ours, calls));
        }
      }
      row.push({ name: op.name, ours: median(ours), raw: median(base) });
    }
    results.set(size, row);
    if (values.explain) writeFileSync(`${values.explain}-${size}.txt`, await explainFleet(raw));
    console.log("| read | ours, ms | raw SQL, ms | ratio |\n|---|---|---|---|");
    for (const r of row) console.log(`| ${r.name} | ${fmt(r.ours)} | ${fmt(r.raw)} | ${(r.ours / r.raw).toFixed(2)}× |`);
  }
  console.log(`\n## The curve (medians of ${REPEATS}; growth: ours at this size / ours at the previous size)\n`);
  console.log(`| read | ${SIZES.map((s) => `${s}: ratio to raw | growth`).join(" | ")} |`);
  console.log(`|---|${SIZES.map(() => "---|---").join("|")}|`);
  for (const [i, { name }] of results.get(SIZES[0]!)!.entries()) {
    const cells = SIZES.map((size, k) => {
      const r = results.get(size)![i]!;
      const prev = k === 0 ? null : results.get(SIZES[k - 1]!)![i]!.ours;
      return `${(r.ours / r.raw).toFixed(2)}× | ${prev === null ? "—" : `${(r.ours / prev).toFixed(2)}×`}`;
    });
    console.log(`| ${name} | ${cells.join(" | ")} |`);
  }
} finally {
  await index.close();
  await closeUrlStores();
  await store.close();
  await raw.end();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
  await admin.end();
  if (cluster) await stopCluster(cluster);
}
