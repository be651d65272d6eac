import { createWriteStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { bundle, PostgresBackend, unbundle } from "../../../src/index.ts";

/**
 * Run in a child with a small heap (`--max-old-space-size`): bundles session `id` of the file store
 * `from` to `<work>/a.tar` and unbundles it into `to`; with a database URL, through it (file → PostgreSQL
 * → file). Prints one JSON line: the peak heap and the peak bytes of live array buffers seen, sampled.
 * Args: <id> <from root> <to root> <work dir> [redact|no-redact|migrate] [database url]; `migrate`:
 * `transcript-store migrate --to <to root>` instead of a bundle (statuses: its exit code).
 */
const [id, from, to, work, redact, url] = process.argv.slice(2) as [string, string, string, string, string, string | undefined];
const redactOutput = redact !== "no-redact";

let heap = 0;
let buffers = 0;
/** Buffers freed but not yet collected count in `arrayBuffers`: above 16 MiB, a collection first (the child runs with --expose-gc). */
const gc = (globalThis as { gc?: () => void }).gc!;
const sample = () => {
  let m = process.memoryUsage();
  if (m.arrayBuffers > 16 * 1024 * 1024) {
    gc();
    m = process.memoryUsage();
  }
  heap = Math.max(heap, m.heapUsed);
  buffers = Math.max(buffers, m.arrayBuffers);
};
const timer = setInterval(sample, 5);

async function through(
  source: { root: string } | { store: PostgresBackend },
  target: { root: string } | { store: PostgresBackend },
  tar: string,
) {
  const t0 = Date.now();
  await pipeline(bundle([id], { ...source, redactOutput }), createWriteStream(tar, { flags: "wx" }));
  sample();
  const t1 = Date.now();
  const report = await unbundle(tar, { ...target, tempDir: work });
  sample();
  process.stderr.write(`bundle ${t1 - t0} ms, unbundle ${Date.now() - t1} ms\n`);
  return report.sessions[0]!.status;
}

const statuses: string[] = [];
if (redact === "migrate") {
  // `migrate --to <root>` (the CLI, in this process): the seam's exportSnapshot → importSnapshot
  const { runCli } = await import("../../../src/cli/run.ts");
  statuses.push(String(await runCli(["migrate", "--root", from, "--to", to, "--json"])));
  sample();
} else if (url === undefined) statuses.push(await through({ root: from }, { root: to }, `${work}/a.tar`));
else {
  const store = PostgresBackend.of(url);
  try {
    statuses.push(await through({ root: from }, { store }, `${work}/a.tar`));
    statuses.push(await through({ store }, { root: to }, `${work}/b.tar`));
  } finally {
    await store.close();
  }
}
clearInterval(timer);
sample();
process.stdout.write(`${JSON.stringify({ statuses, heap, buffers })}\n`);
