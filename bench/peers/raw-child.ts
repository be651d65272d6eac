// Raw Node (or raw Bun: the same file run by Bun) doing each workload's bare I/O (issue 14's baselines): one kept fd +
// JSON.stringify + writeSync per entry; 1 MiB chunk scan + JSON.parse (W4b: and each blob read back as base64);
// readdir + 4 KB head per file; new header line + chunk copy, artifacts by hard link.
import { closeSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { appendP50s, checkLines, ownCopy, ownTree, readJob, report, time } from "./child-io.ts";
import { artifactText, CWD, openingPair, w1Messages, w2Entries } from "./workloads.ts";

/** A v3 writer on one kept fd: a record per message, chained by parentId. */
function writer(path: string): (message: Record<string, unknown>) => void {
  const fd = openSync(path, "a");
  writeSync(fd, `${JSON.stringify({ type: "session", version: 3, id: "raw", timestamp: new Date().toISOString(), cwd: CWD })}\n`);
  let parent: string | null = null;
  let n = 0;
  return (message) => {
    const id = (0x10000000 + n++).toString(16);
    writeSync(fd, `${JSON.stringify({ type: "message", id, parentId: parent, timestamp: new Date().toISOString(), message })}\n`);
    parent = id;
  };
}

/** 1 MiB reads, split on LF, JSON.parse per line, objects kept. */
function scanAndParse(path: string): unknown[] {
  const fd = openSync(path, "r");
  const buf = Buffer.allocUnsafe(1 << 20);
  const out: unknown[] = [];
  let carry: Buffer | null = null;
  try {
    for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) {
      const chunk: Buffer = carry ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
      let start = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
        out.push(JSON.parse(chunk.toString("utf8", start, nl)));
        start = nl + 1;
      }
      carry = start < chunk.length ? Buffer.from(chunk.subarray(start)) : null;
    }
  } finally {
    closeSync(fd);
  }
  return out;
}

/** readdir + open, read 4 KB, close per file. */
function listHeads(dir: string): number {
  const buf = Buffer.allocUnsafe(4096);
  let n = 0;
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".jsonl")) continue;
    const fd = openSync(join(dir, name), "r");
    readSync(fd, buf, 0, buf.length, 0);
    closeSync(fd);
    n++;
  }
  return n;
}

/** A new header line, then the body copied in 1 MiB chunks. */
function forkFile(source: string, target: string): void {
  const input = openSync(source, "r");
  const output = openSync(target, "wx", 0o600);
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let n = readSync(input, buf, 0, buf.length, 0);
    const nl = buf.subarray(0, n).indexOf(10);
    const head = JSON.parse(buf.toString("utf8", 0, nl));
    writeSync(output, `${JSON.stringify({ ...head, id: "raw-fork", parentSession: head.id })}\n`);
    let position = nl + 1;
    for (n = readSync(input, buf, 0, buf.length, position); n > 0; n = readSync(input, buf, 0, buf.length, position)) {
      writeSync(output, buf, 0, n);
      position += n;
    }
  } finally {
    closeSync(input);
    closeSync(output);
  }
}

const job = readJob();
switch (job.workload) {
  case "W1": {
    const messages = w1Messages(job.count);
    const append = writer(join(job.work, "w1.jsonl"));
    for (const m of openingPair()) append(m);
    const ms = await time(() => messages.forEach(append));
    checkLines(join(job.work, "w1.jsonl"), job.count + 3);
    report({ ms });
    break;
  }
  case "W2": {
    const { images, texts } = w2Entries(job.count);
    const append = writer(join(job.work, "w2.jsonl"));
    for (const m of openingPair()) append(m);
    const result = appendP50s(append, images, texts);
    checkLines(join(job.work, "w2.jsonl"), 2 * job.count + 3);
    report(result);
    break;
  }
  case "W3":
  case "W4": {
    const copy = ownCopy(job);
    let entries = 0;
    const ms = await time(() => (entries = scanAndParse(copy).length - 1));
    report({ ms, entries });
    break;
  }
  case "W4B": {
    // Scan and parse, then read each referenced blob and put its base64 back where the ref was.
    const copy = ownCopy(job);
    let entries = 0;
    const ms = await time(() => {
      const records = scanAndParse(copy) as { message?: { content?: { type: string; data?: string }[] } }[];
      for (const record of records)
        for (const block of record.message?.content ?? [])
          if (block.type === "image" && block.data?.startsWith("blob:sha256:"))
            block.data = readFileSync(join(job.blobs!, block.data.slice(12))).toString("base64");
      entries = records.length - 1;
    });
    report({ ms, entries });
    break;
  }
  case "W5": {
    const dir = ownTree(job);
    let n = 0;
    const ms = await time(() => (n = listHeads(dir)));
    if (n !== job.count) throw new Error(`listed ${n} of ${job.count}`);
    report({ ms });
    break;
  }
  case "W6":
    report({ ms: await time(() => forkFile(job.source!, join(job.work, "fork.jsonl"))) });
    break;
  case "W6-artifacts": {
    const source = join(job.work, "src.jsonl");
    const append = writer(source);
    for (const m of openingPair()) append(m);
    mkdirSync(join(job.work, "src"));
    for (let i = 0; i < job.count; i++) writeFileSync(join(job.work, "src", `${i}.bash.log`), artifactText(i));
    const ms = await time(() => {
      forkFile(source, join(job.work, "fork.jsonl"));
      mkdirSync(join(job.work, "fork"), { mode: 0o700 });
      for (const name of readdirSync(join(job.work, "src"))) linkSync(join(job.work, "src", name), join(job.work, "fork", name));
    });
    report({ ms });
    break;
  }
}
