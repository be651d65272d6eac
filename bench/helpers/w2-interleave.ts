// W2's text entry after an image entry (issue 14): what between two text appends slows the second.
// Run: node --import tsx bench/helpers/w2-interleave.ts [pairs]
//
// Each mode runs in its own child (a fresh process, as in `npm run bench:peers`) and appends
// `pairs` of W2's ~150 B text entries to a new session, each after one of:
//   text       nothing (text entries alone)
//   shape      a user entry shaped like W2's image entry with a tiny inline image (our code, no data)
//   data       base64-decode W2's 300 KB image into a reused buffer and sha256 it (no append at all)
//   same-image W2's first image entry again (its blob exists: decode + hash, no blob write)
//   image      W2's next distinct image entry (decode + hash + blob write + rename), as in W2
//   raw-text   nothing, then the raw baseline's text append (JSON.stringify + writeSync on a kept fd)
//   raw-data   `data`, then the raw baseline's text append (JSON.stringify + writeSync on a kept fd)
//   raw-image  the raw baseline's image append (the image inline), then its text append, as in W2
// Prints the text append's p50 and the p50 of its write syscall (through the io seam), in µs.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { io } from "../../src/io.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { CWD, openingPair, w2Entries } from "../peers/workloads.ts";
import { median } from "../stats.ts";

const MODES = ["text", "shape", "data", "same-image", "image", "raw-text", "raw-data", "raw-image"] as const;
type Mode = (typeof MODES)[number];
type Message = { role: string };

async function child(mode: Mode, pairs: number): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "ts-w2-interleave-"));
  try {
    const { images, texts } = w2Entries(pairs);
    const scratch = Buffer.allocUnsafe(1 << 20);
    let writeMs = 0;
    const write = io.writeSync;
    io.writeSync = (...args) => {
      const start = performance.now();
      try {
        return write(...args);
      } finally {
        writeMs += performance.now() - start;
      }
    };
    if (mode.startsWith("raw-")) return raw(mode, pairs, root, images, texts, scratch);
    const m = await SessionManager.create(CWD, { root });
    for (const message of openingPair()) m.appendMessage(message as Message);
    const text: number[] = [];
    const writes: number[] = [];
    for (let i = 0; i < pairs; i++) {
      const image = images[i] as { content: [object, { data: string }] };
      if (mode === "shape")
        m.appendMessage({
          ...image,
          content: [image.content[0], { type: "image", data: `iVBORw0KGgo${i}`, mimeType: "image/png" }],
        } as unknown as Message);
      else if (mode === "data")
        createHash("sha256")
          .update(scratch.subarray(0, scratch.write(image.content[1].data, "base64")))
          .digest("hex");
      else if (mode === "same-image") m.appendMessage(images[0] as Message);
      else if (mode === "image") m.appendMessage(image as unknown as Message);
      writeMs = 0;
      const start = performance.now();
      m.appendMessage(texts[i] as Message);
      text.push((performance.now() - start) * 1000);
      writes.push(writeMs * 1000);
    }
    await m.close();
    console.log(JSON.stringify({ text: median(text), write: median(writes) }));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The raw baseline of `npm run bench:peers` W2 (one kept fd, stringify + writeSync per entry). */
function raw(mode: Mode, pairs: number, root: string, images: object[], texts: object[], scratch: Buffer): void {
  const fd = openSync(join(root, "raw.jsonl"), "a");
  const append = (entry: object) => writeSync(fd, `${JSON.stringify({ type: "message", message: entry })}\n`);
  const text: number[] = [];
  for (let i = 0; i < pairs; i++) {
    const image = images[i] as { content: [object, { data: string }] };
    if (mode === "raw-data")
      createHash("sha256")
        .update(scratch.subarray(0, scratch.write(image.content[1].data, "base64")))
        .digest("hex");
    else if (mode === "raw-image") append(image);
    const start = performance.now();
    append(texts[i]!);
    text.push((performance.now() - start) * 1000);
  }
  closeSync(fd);
  console.log(JSON.stringify({ text: median(text), write: null }));
}

const [mode, pairs] = [process.argv[2], Number(process.argv[3] ?? 200)];
if ((MODES as readonly string[]).includes(mode ?? "")) {
  await child(mode as Mode, pairs);
} else {
  const count = Number(process.argv[2] ?? 200);
  for (const m of MODES) {
    const samples = [1, 2, 3].map(() => {
      const out = spawnSync(process.execPath, ["--import", "tsx", import.meta.filename, m, String(count)], { encoding: "utf8" });
      if (out.status !== 0) throw new Error(`${m}: ${out.stderr.slice(-400)}`);
      return JSON.parse(out.stdout.trim().split("\n").at(-1)!) as { text: number; write: number | null };
    });
    const t = median(samples.map((s) => s.text));
    const w = samples[0]!.write === null ? "" : ` (its write ${median(samples.map((s) => s.write!)).toFixed(1)} µs)`;
    console.log(`${m.padEnd(10)} text p50 ${t.toFixed(1).padStart(5)} µs${w}, medians of 3 children`);
  }
}
