// `tsx bench/postgres/store.ts [--url postgres://…] [--repeats 5] [--rows 20000] [--open-mb 100] [--sessions 10000]`
// PgStore against the raw SQL it stands on, each pair in the same run on the same server:
// append (batches of 64 through appendBatch vs the same rows by a raw batched INSERT), open of a
// 100 MB session (readSession vs a raw cursor), listing 10,000 sessions (listSessions vs a raw
// SELECT), fork of the 100 MB session (forkSession vs a raw INSERT … SELECT).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { PgStore } from "../../src/storage/postgres/db/index.ts";
import type { PgLine } from "../../src/storage/postgres/db/types.ts";
import { findPgBin, startCluster, stopCluster } from "../../test/support/pg-cluster.ts";
import { median } from "../stats.ts";
import { readThroughCursor } from "./cursor-read.ts";

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    repeats: { type: "string", default: "5" },
    rows: { type: "string", default: "20000" },
    "open-mb": { type: "string", default: "100" },
    sessions: { type: "string", default: "10000" },
    procs: { type: "string", default: "8" },
  },
});
const REPEATS = Number(values.repeats);
const ROWS = Number(values.rows);
const BATCH = 64;
const OPEN_ROWS = Math.round((Number(values["open-mb"]) * 1e6) / 2048);
const SESSIONS = Number(values.sessions);
const PROCS = Number(values.procs);

const binDir = findPgBin();
if (!values.url && !binDir) throw new Error("no PostgreSQL binaries; pass --url");
const cluster = values.url ? null : await startCluster(binDir!);
const url = values.url ?? cluster!.url;

const header = (id: string, cwd = "/bench") =>
  JSON.stringify({ type: "session", version: 3, id, timestamp: new Date().toISOString(), cwd });
function line(n: number): PgLine {
  const entryId = n.toString(16).padStart(8, "0");
  const text = `entry ${n} `.repeat(180).slice(0, 1960);
  return { line: JSON.stringify({ type: "message", id: entryId, message: { role: "user", content: text } }), entryId, kind: "message" };
}

const store = await PgStore.connect(url, { maxConnections: 4 });
const raw = new pg.Pool({ connectionString: url, max: 2 });
raw.on("error", () => {});
const lines = Array.from({ length: ROWS }, (_, i) => line(i + 1));

async function appendOurs(): Promise<number> {
  const { session, token } = await store.createSession(header(randomUUID()), { lease: { holder: "bench", ttlMs: 600_000 } });
  const t0 = performance.now();
  for (let at = 0; at < ROWS; at += BATCH) await store.appendBatch(session.id, token!, at + 1, lines.slice(at, at + BATCH));
  return performance.now() - t0;
}

/** The same rows, batches and transactions with no lease check, dedupe or listing upkeep. */
async function appendRaw(): Promise<number> {
  const { session } = await store.createSession(header(randomUUID()));
  const client = await raw.connect();
  const t0 = performance.now();
  for (let at = 0; at < ROWS; at += BATCH) {
    const chunk = lines.slice(at, at + BATCH);
    await client.query("BEGIN");
    await client.query(
      `INSERT INTO entries (session_id, seq, entry_id, kind, line)
       SELECT $1, $2::bigint + o - 1, e, k, l FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(e, k, l, o)`,
      [session.id, at + 1, chunk.map((l) => l.entryId), chunk.map((l) => l.kind), chunk.map((l) => l.line)],
    );
    await client.query("COMMIT");
  }
  const ms = performance.now() - t0;
  client.release();
  return ms;
}

async function seedBig(): Promise<string> {
  const { session } = await store.createSession(header(randomUUID()));
  await raw.query(
    `INSERT INTO entries (session_id, seq, entry_id, kind, line)
     SELECT $1, g, lpad(to_hex(g), 8, '0'), 'message', '{"type":"message","n":' || g || ',"text":"' ||
            (SELECT string_agg(md5(g::text || i::text), '') FROM generate_series(1, 62) i) || '"}'
       FROM generate_series(1, $2) g`,
    [session.id, OPEN_ROWS],
  );
  await raw.query("UPDATE sessions SET last_seq = $2, message_count = $2 WHERE id = $1", [session.id, OPEN_ROWS]);
  return session.id;
}

async function openOurs(id: string): Promise<number> {
  const t0 = performance.now();
  let bytes = 0;
  await store.readSession(id, (batch) => {
    for (const e of batch) bytes += e.line.length;
  });
  if (bytes === 0) throw new Error("read nothing");
  return performance.now() - t0;
}

async function openRaw(id: string): Promise<number> {
  const client = await raw.connect();
  const t0 = performance.now();
  const bytes = await readThroughCursor(client, "SELECT line FROM entries WHERE session_id = $1 ORDER BY seq", [id]);
  const ms = performance.now() - t0;
  client.release();
  if (bytes === 0) throw new Error("read nothing");
  return ms;
}

async function seedSessions(): Promise<void> {
  await raw.query(
    `INSERT INTO sessions (id, cwd, created, modified, header)
     SELECT gen_random_uuid()::text, '/list/' || (g % 20), now(), now() - g * interval '1 second', '{}' FROM generate_series(1, $1) g`,
    [SESSIONS],
  );
}

async function listOurs(): Promise<number> {
  const t0 = performance.now();
  const all = await store.listSessions();
  if (all.length < SESSIONS) throw new Error("listed too few");
  return performance.now() - t0;
}

async function listRaw(): Promise<number> {
  const t0 = performance.now();
  const { rows } = await raw.query("SELECT id, cwd, title, created, modified, message_count FROM sessions ORDER BY modified DESC");
  if (rows.length < SESSIONS) throw new Error("listed too few");
  return performance.now() - t0;
}

async function forkOurs(id: string): Promise<number> {
  const t0 = performance.now();
  const { session } = await store.forkSession(id, header(randomUUID()));
  const ms = performance.now() - t0;
  await raw.query("DELETE FROM sessions WHERE id = $1", [session.id]);
  return ms;
}

async function forkRaw(id: string): Promise<number> {
  const copy = randomUUID();
  const client = await raw.connect();
  const t0 = performance.now();
  await client.query("BEGIN");
  await client.query("INSERT INTO sessions (id, cwd, created, header) VALUES ($1, '/bench', now(), '{}')", [copy]);
  await client.query("INSERT INTO entries SELECT $2, seq, entry_id, kind, line FROM entries WHERE session_id = $1", [id, copy]);
  await client.query("COMMIT");
  const ms = performance.now() - t0;
  client.release();
  await raw.query("DELETE FROM sessions WHERE id = $1", [copy]);
  return ms;
}

/** PROCS processes appending ROWS / PROCS rows each to their own session at once; returns the wall time from the start barrier. */
async function appendProcs(mode: "ours" | "raw"): Promise<number> {
  const gate = await raw.connect();
  await gate.query("SELECT pg_advisory_lock(7331)");
  const arg = JSON.stringify({ url, mode, rows: Math.floor(ROWS / PROCS), batch: BATCH });
  let ready = 0;
  let allReady: () => void = () => {};
  const readyAll = new Promise<void>((resolve) => (allReady = resolve));
  const children = Array.from({ length: PROCS }, () => {
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "store-append-child.ts"), arg], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      if (d.includes("ready") && ++ready === PROCS) allReady();
    });
    return new Promise<void>((resolve, reject) => child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(out)))));
  });
  await readyAll;
  const t0 = performance.now();
  await gate.query("SELECT pg_advisory_unlock(7331)");
  gate.release();
  await Promise.all(children);
  return performance.now() - t0;
}

const fmt = (ms: number) => `${ms.toFixed(0)} ms`;
try {
  const results: Array<[string, number[], number[]]> = [
    [`append ${ROWS} × 2 KB, batches of 64`, [], []],
    [`open ${values["open-mb"]} MB`, [], []],
    [`list ${SESSIONS} sessions`, [], []],
    [`fork ${values["open-mb"]} MB`, [], []],
    [`append ${ROWS} × 2 KB, ${PROCS} processes`, [], []],
  ];
  for (let r = 0; r < REPEATS; r++) {
    results[0]![1].push(await appendOurs());
    results[0]![2].push(await appendRaw());
  }
  for (let r = 0; r < REPEATS; r++) {
    results[4]![1].push(await appendProcs("ours"));
    results[4]![2].push(await appendProcs("raw"));
  }
  const big = await seedBig();
  for (let r = 0; r < REPEATS; r++) {
    results[1]![1].push(await openOurs(big));
    results[1]![2].push(await openRaw(big));
  }
  for (let r = 0; r < REPEATS; r++) {
    results[3]![1].push(await forkOurs(big));
    results[3]![2].push(await forkRaw(big));
  }
  await seedSessions();
  for (let r = 0; r < REPEATS; r++) {
    results[2]![1].push(await listOurs());
    results[2]![2].push(await listRaw());
  }
  console.log(`\nPgStore vs raw SQL on the same server, medians of ${REPEATS}\n`);
  console.log("| work | PgStore | raw baseline | ratio |\n|---|---|---|---|");
  for (const [name, ours, base] of results) {
    const [o, b] = [median(ours), median(base)];
    const extra = name.startsWith("append") ? ` (${Math.round((ROWS / o) * 1000)} vs ${Math.round((ROWS / b) * 1000)} rows/s)` : "";
    console.log(`| ${name} | ${fmt(o)} | ${fmt(b)} | ${(o / b).toFixed(2)}×${extra} |`);
  }
} finally {
  await store.close();
  await raw.end();
  if (cluster) await stopCluster(cluster);
}
