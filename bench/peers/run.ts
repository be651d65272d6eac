// `npm run bench:peers`: the same workloads through our SessionManager and pi's, side by side.
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { clearSessionInfoCache } from "../../src/session/discovery.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { median } from "../stats.ts";
import { cwdBucket } from "../../src/session/paths.ts";
import { agentMessage, prng, writeImageHeavyLegacy, writeSessionTree, writeTextSession } from "../workload.ts";
import { PI_MODULE, PI_VERSION } from "./pi-module.ts";

const { SessionManager: Pi } = (await import(PI_MODULE)) as { SessionManager: any };
const REPEATS = 5;

interface Row {
  workload: string;
  unit: string;
  ours: number | string;
  pi: number | string;
}

function child(
  script: string,
  args: string[],
  heapMB: number,
): Promise<{ ok: true; ms: number; maxRssMB: number } | { ok: false; reason: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [`--max-old-space-size=${heapMB}`, "--import", "tsx", join(import.meta.dirname, script), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    c.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    c.stderr.setEncoding("utf8").on("data", (d) => (err += d));
    c.on("close", (code) => {
      if (code === 0) return resolve({ ok: true, ...JSON.parse(out.trim().split("\n").at(-1)!) });
      resolve({
        ok: false,
        reason: /heap out of memory|Allocation failed/i.test(err)
          ? `out of memory at --max-old-space-size=${heapMB}`
          : `exit ${code}: ${err.trim().split("\n").at(-1)}`,
      });
    });
  });
}

const work = mkdtempSync(join(tmpdir(), "ts-bench-peers-"));
const rows: Row[] = [];
try {
  // append: 5,000 ~2 KB messages
  const random = prng(3);
  const messages = Array.from({ length: 5000 }, (_, i) => agentMessage(random, i, 2048));
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const m = await SessionManager.create(join(work, "cwd"), { root: join(work, `ours-${r}`) });
    let t = performance.now();
    for (const msg of messages) m.appendMessage(msg as { role: string });
    ours.push(((performance.now() - t) / messages.length) * 1000);
    await m.close();
    const p = Pi.create(join(work, "cwd"), join(work, `pi-${r}`));
    p.appendMessage({ role: "assistant", content: [{ type: "text", text: "start" }], timestamp: 0 });
    t = performance.now();
    for (const msg of messages) p.appendMessage(msg);
    theirs.push(((performance.now() - t) / messages.length) * 1000);
  }
  rows.push({ workload: "append ~2 KB messages", unit: "µs/append", ours: median(ours), pi: median(theirs) });

  // open a 50 MB text session
  const text = join(work, "text.jsonl");
  writeTextSession(text, 50e6, 11);
  const mb = statSync(text).size / 1e6;
  const oo: number[] = [];
  const po: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    let t = performance.now();
    await (await SessionManager.open(text, { root: join(work, "o"), readOnly: true })).close();
    oo.push(performance.now() - t);
    t = performance.now();
    Pi.open(text, join(work, "p-open"));
    po.push(performance.now() - t);
  }
  rows.push({
    workload: `open ${mb.toFixed(0)} MB text session`,
    unit: "MB/s",
    ours: mb / (median(oo) / 1000),
    pi: mb / (median(po) / 1000),
  });

  // open an image-heavy legacy session under the same heap limit
  const images = join(work, "images.jsonl");
  writeImageHeavyLegacy(images, 300e6, 5);
  const imgMB = statSync(images).size / 1e6;
  const ourImg = await child("../helpers/rss-child.ts", ["open-lazy", images, join(work, "oi")], 512);
  const copy = join(work, "images-pi.jsonl");
  cpSync(images, copy);
  const piImg = await child("pi-child.ts", ["open", copy, join(work, "pi-img")], 512);
  const show = (r: typeof ourImg) => (r.ok ? `${r.maxRssMB.toFixed(0)} MB RSS, ${(r.ms / 1000).toFixed(1)} s` : r.reason);
  rows.push({
    workload: `open ${imgMB.toFixed(0)} MB image-heavy session (heap 512 MB)`,
    unit: "peak RSS",
    ours: show(ourImg),
    pi: show(piImg),
  });

  // list 2,000 sessions of one cwd
  const cwd = "/home/u/listing";
  writeSessionTree(join(work, "list", "sessions"), [cwd], 2000, cwdBucket);
  const bucket = join(work, "list", "sessions", cwdBucket(cwd));
  const ol: number[] = [];
  const pl: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    clearSessionInfoCache(); // pi keeps no cache: compare first listings
    let t = performance.now();
    const a = await SessionManager.list(cwd, { root: join(work, "list") });
    ol.push(performance.now() - t);
    t = performance.now();
    const b = await Pi.list(cwd, bucket);
    pl.push(performance.now() - t);
    if (a.length !== 2000 || b.length !== 2000) throw new Error(`list counts ${a.length}/${b.length}`);
  }
  rows.push({ workload: "list 2,000 sessions of one cwd (first listing)", unit: "ms", ours: median(ol), pi: median(pl) });

  // fork a 5 MB session
  const src = join(work, "fork-src.jsonl");
  writeTextSession(src, 5e6, 13);
  const of: number[] = [];
  const pf: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    let t = performance.now();
    await (await SessionManager.forkFrom(src, join(work, "fork-cwd"), { root: join(work, "of"), rehydrate: "lazy" })).close();
    of.push(performance.now() - t);
    t = performance.now();
    Pi.forkFrom(src, join(work, "fork-cwd"), join(work, "pf"));
    pf.push(performance.now() - t);
  }
  rows.push({ workload: "forkFrom a 5 MB session", unit: "ms", ours: median(of), pi: median(pf) });
} finally {
  rmSync(work, { recursive: true, force: true });
}

const fmt = (v: number | string) => (typeof v === "string" ? v : v >= 100 ? v.toFixed(0) : v.toFixed(2));
console.log(
  `\nNode ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}; pi-coding-agent ${PI_VERSION}; medians of ${REPEATS}\n`,
);
console.log("| workload | ours | pi | pi / ours |");
console.log("|---|---|---|---|");
for (const r of rows) {
  const ratio =
    typeof r.ours === "number" && typeof r.pi === "number"
      ? `${(r.unit === "MB/s" ? r.ours / r.pi : r.pi / r.ours).toFixed(2)}× ${r.unit === "MB/s" ? "(ours faster by)" : ""}`
      : "—";
  console.log(
    `| ${r.workload} | ${fmt(r.ours)} ${typeof r.ours === "number" ? r.unit : ""} ` +
      `| ${fmt(r.pi)} ${typeof r.pi === "number" ? r.unit : ""} | ${ratio} |`,
  );
}
