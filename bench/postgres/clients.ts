// `tsx bench/postgres/clients.ts [--url postgres://…] [--repeats 3] [--rows 20000] [--open-mb 100]`
// Chooses the PostgreSQL client on evidence: node-postgres (`pg`) against porsager's `postgres` on
// (a) appending ~2 KB rows in batches of 64, one transaction per batch, and (b) reading a 100 MB
// session's rows back in seq order through a cursor; each beside a psql baseline in the same run.
// Both clients are installed into the ignored .bench-peers/ (bench/postgres/install.sh), so the
// one that is not the runtime dependency never enters package.json.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { findPgBin, startCluster, stopCluster } from "../../test/support/pg-cluster.ts";
import { median } from "../stats.ts";
import { readThroughCursor } from "./cursor-read.ts";

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    repeats: { type: "string", default: "3" },
    rows: { type: "string", default: "20000" },
    "open-mb": { type: "string", default: "100" },
  },
});
const REPEATS = Number(values.repeats);
const ROWS = Number(values.rows);
const BATCH = 64;
const OPEN_ROWS = Math.round((Number(values["open-mb"]) * 1e6) / 2048);

const peers = createRequire(join(import.meta.dirname, "../../.bench-peers/node_modules/"));
// both from .bench-peers, so each client is measured at the version installed there (porsager's types are absent here)
const pg = peers("pg") as typeof import("pg");
const porsager = peers("postgres") as (url: string, options: object) => any;

const binDir = findPgBin();
if (!values.url && !binDir) throw new Error("no PostgreSQL binaries; pass --url");
const cluster = values.url ? null : await startCluster(binDir!);
const url = values.url ?? cluster!.url;

function psqlRun(args: string[]): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile(join(binDir!, "psql"), ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, ...args], { maxBuffer: 1 << 30 }, (err) =>
      err ? reject(err) : resolve(),
    ),
  );
}

/** ~2 KB JSONL-like line, deterministic. */
function line(seq: number): string {
  const text = `entry ${seq} `.repeat(180).slice(0, 1960);
  return JSON.stringify({ type: "message", id: seq.toString(16).padStart(8, "0"), message: { role: "user", content: text } });
}
const lines = Array.from({ length: ROWS }, (_, i) => line(i));
const INSERT = "INSERT INTO bench_entries (session_id, seq, line) SELECT $1, s, l FROM unnest($2::bigint[], $3::text[]) AS u(s, l)";

async function reset(): Promise<void> {
  await psqlRun([
    "-c",
    "DROP TABLE IF EXISTS bench_entries; " +
      "CREATE TABLE bench_entries (session_id text, seq bigint, line text, PRIMARY KEY (session_id, seq))",
  ]);
}

function batches(): Array<{ seqs: number[]; lines: string[] }> {
  const out = [];
  for (let i = 0; i < ROWS; i += BATCH) {
    const seqs = Array.from({ length: Math.min(BATCH, ROWS - i) }, (_, k) => i + k);
    out.push({ seqs, lines: seqs.map((s) => lines[s]!) });
  }
  return out;
}

async function appendPg(): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const t0 = performance.now();
  for (const b of batches()) {
    await client.query("BEGIN");
    await client.query({ name: "ins", text: INSERT, values: ["s1", b.seqs, b.lines] });
    await client.query("COMMIT");
  }
  const ms = performance.now() - t0;
  await client.end();
  return ms;
}

async function appendPorsager(): Promise<number> {
  const sql = porsager(url, { max: 1, onnotice: () => {} });
  const t0 = performance.now();
  for (const b of batches()) {
    await sql.begin((tx: any) => tx.unsafe(INSERT, ["s1", b.seqs as never, b.lines as never], { prepare: true }));
  }
  const ms = performance.now() - t0;
  await sql.end();
  return ms;
}

/** Baseline: the same batches as literal multi-row INSERTs in BEGIN/COMMIT, run by psql from a file. */
async function appendPsql(): Promise<number> {
  const file = join(tmpdir(), `ts-bench-append-${process.pid}.sql`);
  const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;
  const script = batches()
    .map((b) => `BEGIN;\nINSERT INTO bench_entries VALUES ${b.seqs.map((s, k) => `('s1',${s},${quote(b.lines[k]!)})`).join(",")};\nCOMMIT;`)
    .join("\n");
  writeFileSync(file, script);
  const t0 = performance.now();
  await psqlRun(["-f", file]);
  return performance.now() - t0;
}

async function seedOpen(): Promise<void> {
  await reset();
  await psqlRun([
    "-c",
    `INSERT INTO bench_entries SELECT 'big', g, '{"type":"message","n":' || g || ',"text":"' ||
       (SELECT string_agg(md5(g::text || i::text), '') FROM generate_series(1, 62) i) || '"}' FROM generate_series(0, ${OPEN_ROWS - 1}) g`,
  ]);
}

const SELECT = "SELECT line FROM bench_entries WHERE session_id = 'big' ORDER BY seq";

async function openPg(): Promise<{ ms: number; bytes: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const t0 = performance.now();
  const bytes = await readThroughCursor(client, SELECT);
  const ms = performance.now() - t0;
  await client.end();
  return { ms, bytes };
}

async function openPorsager(): Promise<{ ms: number; bytes: number }> {
  const sql = porsager(url, { max: 1, onnotice: () => {} });
  const t0 = performance.now();
  let bytes = 0;
  await sql.begin(async (tx: any) => {
    for await (const rows of tx.unsafe(SELECT).cursor(1000)) for (const r of rows) bytes += (r.line as string).length;
  });
  const ms = performance.now() - t0;
  await sql.end();
  return { ms, bytes };
}

/** Baseline: psql fetching the same rows 1000 at a time (FETCH_COUNT) to /dev/null. */
async function openPsql(): Promise<number> {
  const t0 = performance.now();
  await psqlRun(["-A", "-t", "-v", "FETCH_COUNT=1000", "-o", "/dev/null", "-c", SELECT]);
  return performance.now() - t0;
}

async function measureAppend(fn: () => Promise<number>): Promise<number> {
  await reset();
  return fn();
}

try {
  const rowsPerSec = (ms: number) => Math.round((ROWS / ms) * 1000);
  // interleave so that the shared machine's noise falls on all three alike
  const append = { psql: [] as number[], pg: [] as number[], postgres: [] as number[] };
  for (let r = 0; r < REPEATS; r++) {
    append.psql.push(await measureAppend(appendPsql));
    append.pg.push(await measureAppend(appendPg));
    append.postgres.push(await measureAppend(appendPorsager));
  }
  await seedOpen();
  const open = { psql: [] as number[], pg: [] as number[], postgres: [] as number[] };
  let mb = 0;
  for (let r = 0; r < REPEATS; r++) {
    open.psql.push(await openPsql());
    const a = await openPg();
    open.pg.push(a.ms);
    const b = await openPorsager();
    open.postgres.push(b.ms);
    if (a.bytes !== b.bytes) throw new Error(`clients read different bytes: ${a.bytes} vs ${b.bytes}`);
    mb = a.bytes / 1e6;
  }
  const base = { append: median(append.psql), open: median(open.psql) };
  console.log(`\nappend ${ROWS} rows of ~2 KB, batches of ${BATCH}, one transaction each; medians of ${REPEATS}`);
  console.log("| client | ms | rows/s | ratio to psql baseline |\n|---|---|---|---|");
  for (const [name, times] of Object.entries(append)) {
    const ms = median(times);
    console.log(`| ${name} | ${ms.toFixed(0)} | ${rowsPerSec(ms)} | ${(ms / base.append).toFixed(2)}× |`);
  }
  console.log(`\nopen: read ${mb.toFixed(0)} MB (${OPEN_ROWS} rows) in seq order through a cursor of 1000 rows; medians of ${REPEATS}`);
  console.log("| client | ms | MB/s | ratio to psql baseline |\n|---|---|---|---|");
  for (const [name, times] of Object.entries(open)) {
    const ms = median(times);
    console.log(`| ${name} | ${ms.toFixed(0)} | ${((mb / ms) * 1000).toFixed(0)} | ${(ms / base.open).toFixed(2)}× |`);
  }
} finally {
  if (cluster) await stopCluster(cluster);
}
