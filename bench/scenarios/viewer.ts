import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { cwdBucket } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { openSessionIndex } from "../../src/search/session-index.ts";
import { findChromium } from "../../test/support/chromium.ts";
import { median, quantile } from "../stats.ts";
import type { BenchContext, BenchRow } from "../types.ts";
import { writeSessionTree, writeTextSession } from "../workload.ts";
import { scanAndParse } from "./open.ts";

/** Starts `transcript-store serve` in a child process (the way a user runs it) and resolves to its URL. */
function serve(root: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["bin/transcript-store.mjs", "serve", "--root", root], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /(http:\/\/\S+token=\S+)/.exec(out);
      if (m !== null) resolve({ child, url: m[1]! });
    });
    child.on("exit", (code) => reject(new Error(`serve exited ${code}`)));
  });
}

/** Resident memory of a process, from /proc (Linux). */
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m === null ? Number.NaN : Number(m[1]) / 1024;
}

/**
 * The viewer (issue 37's targets): the first screen of a big session in headless Chromium against
 * reading and parsing the file alone; the session list and search-as-you-type over a large store
 * against the library calls they wrap; the server's memory; an append's trip to the screen.
 */
export async function benchViewer(ctx: BenchContext): Promise<BenchRow[]> {
  const binary = findChromium();
  if (binary === null) throw new Error("the viewer bench needs Chromium (apt-get install chromium)");
  const root = mkdtempSync(join(tmpdir(), "ts-bench-viewer-"));
  const browser = await chromium.launch({
    executablePath: binary,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  let server: ChildProcess | undefined;
  try {
    const sessions = join(root, "sessions");
    const count = ctx.listSessions ?? (ctx.quick ? 1000 : 10_000);
    const buckets = Math.max(1, Math.round(count / 100));
    const cwds = Array.from({ length: buckets }, (_, b) => `/home/u/project-${b}`);
    writeSessionTree(sessions, cwds, Math.ceil(count / buckets), cwdBucket);
    const bigDir = join(sessions, cwdBucket("/home/u/big"));
    mkdirSync(bigDir, { recursive: true });
    const bigPath = join(bigDir, "2025-06-01T00-00-00-000Z_0190a000-0000-7000-8000-00000000bench.jsonl");
    const entries = writeTextSession(bigPath, ctx.quick ? 20 * 1024 * 1024 : Math.max(ctx.sizeBytes, 100 * 1024 * 1024));
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const bucket of readdirSync(sessions))
      for (const name of readdirSync(join(sessions, bucket))) utimesSync(join(sessions, bucket, name), hourAgo, hourAgo);
    // The index as a user has it after a first `search`.
    const index = await openSessionIndex({ root });
    await index.search("warmup");
    await index.close();
    const started = await serve(root);
    server = started.child;
    const origin = new URL(started.url).origin;
    const page = await browser.newPage();
    await page.goto(started.url);
    const total = count + 1;

    // Session list: the page's HTML, end to end, against listAll in this process.
    const listMs: number[] = [];
    const libListMs: number[] = [];
    for (let i = 0; i < ctx.repeats; i++) {
      let t = performance.now();
      const r = await page.request.get(`${origin}/`);
      await r.body();
      listMs.push(performance.now() - t);
      t = performance.now();
      await SessionManager.listAll({ root, includeArchived: true });
      libListMs.push(performance.now() - t);
    }

    // Search as you type: one request per keystroke of three words.
    const typed = [
      "p",
      "pa",
      "par",
      "pars",
      "parse",
      "parser",
      "parser e",
      "parser er",
      "parser err",
      "parser erro",
      "parser error",
      "t",
      "te",
      "tes",
      "test",
    ];
    const searchMs: number[] = [];
    for (let i = 0; i < Math.max(2, Math.ceil(ctx.repeats / 2)); i++)
      for (const q of typed) {
        const t = performance.now();
        const r = await page.request.get(`${origin}/api/search?prefix=1&q=${encodeURIComponent(q)}`);
        await r.body();
        searchMs.push(performance.now() - t);
      }

    // First screen of the big session: navigation to the first entry drawn.
    const firstMs: number[] = [];
    const parseMs: number[] = [];
    for (let i = 0; i < Math.max(3, Math.ceil(ctx.repeats / 2)); i++) {
      let t = performance.now();
      scanAndParse(bigPath);
      parseMs.push(performance.now() - t);
      t = performance.now();
      await page.goto(`${origin}/s/0190a000-0000-7000-8000-00000000bench`, { waitUntil: "commit" });
      await page.locator("#transcript article").first().waitFor();
      firstMs.push(performance.now() - t);
    }
    const rss = rssMb(server.pid!);

    // An append's trip to the screen (the page follows the session's latest branch).
    const small = (await SessionManager.listAll({ root })).find((s) => s.cwd === "/home/u/project-0")!;
    await page.goto(`${origin}/s/${small.id}`);
    await page.locator(".live-status").waitFor();
    const appendMs: number[] = [];
    const writer = await SessionManager.open(small.path, { root });
    try {
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        writer.appendMessage({ role: "user", content: `live marker ${i}`, timestamp: Date.now() });
        await writer.flush();
        await page.locator("#transcript", { hasText: `live marker ${i}` }).waitFor();
        appendMs.push(performance.now() - t);
      }
    } finally {
      await writer.close();
    }
    const bigMb = Math.round(ctx.quick ? 20 : Math.max(ctx.sizeBytes / 2 ** 20, 100));
    const list = median(listMs);
    const lib = median(libListMs);
    const first = median(firstMs);
    const parse = median(parseMs);
    const p95 = quantile(searchMs, 0.95);
    return [
      {
        scenario: `viewer: first screen of a ${bigMb} MB / ${entries}-entry session`,
        unit: "ms",
        ours: first,
        baseline: parse,
        baselineName: "reading and parsing the file alone",
        ratio: first / parse,
        target: "≤ 1000 ms",
        met: first <= 1000,
      },
      {
        scenario: `viewer: session list of ${total} sessions (page, end to end)`,
        unit: "ms",
        ours: list,
        baseline: lib,
        baselineName: "listAll in the bench's process",
        ratio: list / lib,
        target: "≤ 300 ms",
        met: list <= 300,
      },
      {
        scenario: `viewer: search as you type over ${total} sessions (p95 of ${searchMs.length})`,
        unit: "ms",
        ours: p95,
        baseline: median(searchMs),
        baselineName: "the median request",
        ratio: p95 / median(searchMs),
        target: "p95 ≤ 100 ms",
        met: p95 <= 100,
      },
      {
        scenario: `viewer: server memory over ${total} sessions (RSS after the views above)`,
        unit: "MB",
        ours: rss,
        baseline: null,
        baselineName: "",
        ratio: null,
        target: "≤ 200 MB",
        met: rss <= 200,
      },
      {
        scenario: "viewer: an append reaches the screen",
        unit: "ms",
        ours: median(appendMs),
        baseline: null,
        baselineName: "",
        ratio: null,
        target: "≤ 250 ms",
        met: median(appendMs) <= 250,
      },
    ];
  } finally {
    server?.kill();
    await browser.close();
    rmSync(root, { recursive: true, force: true });
  }
}
