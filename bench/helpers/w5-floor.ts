// W5's floor (issue 14): how far above raw any listing lands that reads what a SessionInfo holds.
// Run: node --import tsx bench/helpers/w5-floor.ts [sessions] [rounds]
//
// In one process, alternating, warm: raw (readdir + open/read 4 KB/close, nothing kept, as in
// `npm run bench:peers`), the floor (the same plus fstat, JSON.parse of the header line and of the
// first user line, one result object per file: the least a listing can do), and
// `SessionManager.list` with its in-process cache cleared. Prints medians and ratios to raw.
import { closeSync, fstatSync, mkdtempSync, openSync, readdirSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { cwdBucket } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { CWD, writeBucket } from "../peers/workloads.ts";
import { median } from "../stats.ts";

const sessions = Number(process.argv[2] ?? 2000);
const rounds = Number(process.argv[3] ?? 15);
const root = mkdtempSync(join(tmpdir(), "ts-w5-floor-"));
const bucket = join(root, cwdBucket(CWD, "omp"));
const buf = Buffer.allocUnsafe(8192);
const USER = Buffer.from('"role":"user"');

function raw(): number {
  let n = 0;
  for (const name of readdirSync(bucket)) {
    const fd = openSync(join(bucket, name), "r");
    readSync(fd, buf, 0, 4096, 0);
    closeSync(fd);
    n++;
  }
  return n;
}

function floor(): number {
  const out: object[] = [];
  for (const name of readdirSync(bucket)) {
    const path = join(bucket, name);
    const fd = openSync(path, "r");
    const stat = fstatSync(fd);
    readSync(fd, buf, 0, buf.length, 0);
    closeSync(fd);
    const header = JSON.parse(buf.toString("utf8", 0, buf.indexOf(0x0a)));
    const user = buf.indexOf(USER);
    const line = JSON.parse(buf.toString("utf8", buf.lastIndexOf(0x0a, user) + 1, buf.indexOf(0x0a, user)));
    const first = String(line.message.content).slice(0, 200);
    out.push({ path, id: header.id, cwd: header.cwd, created: new Date(header.timestamp), modified: stat.mtime, size: stat.size, first });
  }
  return out.length;
}

async function ours(): Promise<number> {
  clearSessionInfoCache();
  return (await SessionManager.list(CWD, { sessionsDir: root, layout: "omp" })).length;
}

try {
  writeBucket(bucket, sessions);
  const times = { raw: [] as number[], floor: [] as number[], ours: [] as number[] };
  for (let i = 0; i < rounds + 2; i++) {
    for (const [name, fn] of [
      ["raw", raw],
      ["floor", floor],
      ["ours", ours],
    ] as const) {
      const start = performance.now();
      const n = await fn();
      const ms = performance.now() - start;
      if (n !== sessions) throw new Error(`${name} listed ${n} of ${sessions}`);
      if (i >= 2) times[name].push(ms); // two warm-up rounds
    }
  }
  const base = median(times.raw);
  for (const name of ["raw", "floor", "ours"] as const) {
    const m = median(times[name]);
    console.log(`${name.padEnd(6)} ${m.toFixed(1).padStart(7)} ms  ${(m / base).toFixed(2)}× raw`);
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
