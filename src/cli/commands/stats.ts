import { join } from "node:path";
import { BlobStore } from "../../blob/blob-store.ts";
import { io } from "../../io.ts";
import { blobRefsOfFile, RefCounter } from "../../maintenance/blob-refs.ts";
import { statsDatabase } from "../database.ts";
import { formatBytes, type Command } from "../context.ts";
import { findSessionFiles } from "../find-files.ts";

export const statsCommand: Command = {
  name: "stats",
  summary: "session and blob sizes, blob count and deduplication ratio",
  usage: "stats",
  options: {},
  maxArgs: 0,
  async run(ctx) {
    if (ctx.store !== undefined) return statsDatabase(ctx);
    const files = io.existsSync(ctx.dirs.sessionsDir) ? await findSessionFiles([ctx.dirs.sessionsDir], ctx.io.cwd) : [];
    const counter = new RefCounter();
    let sessionBytes = 0;
    for (const f of files) {
      sessionBytes += io.statSync(f).size;
      blobRefsOfFile(f, counter);
    }
    let blobs = 0;
    let blobBytes = 0;
    const sizes = new Map<string, number>();
    for await (const hash of new BlobStore(ctx.dirs.blobsDir).list()) {
      const size = io.statSync(join(ctx.dirs.blobsDir, hash)).size;
      sizes.set(hash, size);
      blobs++;
      blobBytes += size;
    }
    let logical = 0;
    let physical = 0;
    let refs = 0;
    for (const [hash, n] of counter.counts) {
      refs += n;
      const size = sizes.get(hash) ?? 0;
      logical += size * n;
      physical += size;
    }
    const dedupRatio = physical > 0 ? logical / physical : 1;
    const record = {
      type: "stats",
      sessions: files.length,
      sessionBytes,
      blobs,
      blobBytes,
      references: refs,
      referencedBlobs: counter.counts.size,
      dedupRatio,
    };
    ctx.emit(
      record,
      `sessions: ${files.length} (${formatBytes(sessionBytes)})\n` +
        `blobs:    ${blobs} (${formatBytes(blobBytes)})\n` +
        `refs:     ${refs} to ${counter.counts.size} blob(s), dedup ratio ${dedupRatio.toFixed(2)}×`,
    );
    return 0;
  },
};
