import { join } from "node:path";
import { BlobStore } from "../../blob/blob-store.ts";
import type { StoreWarning } from "../../errors.ts";
import { io } from "../../io.ts";
import { blobRefsOfFile, RefCounter } from "../../maintenance/blob-refs.ts";
import { statsDatabase } from "../database.ts";
import { SessionManager } from "../../session/session-manager.ts";
import { formatBytes, printWarning, storeOptions, type Command } from "../context.ts";
import { spaceTotalsText, storeSpaceTotals } from "./accounting.ts";

export const statsCommand: Command = {
  name: "stats",
  readOnly: true,
  summary: "session and blob sizes, blob count and deduplication ratio",
  usage: "stats",
  options: {},
  maxArgs: 0,
  async run(ctx) {
    if (ctx.store !== undefined) return statsDatabase(ctx);
    // Sessions are what `ls --all --archived` lists (one rule): a file without a session header (a Claude
    // Code or Codex transcript, a damaged file) is counted apart, not as a session.
    let notSessions = 0;
    const warn = printWarning(ctx.io);
    const onWarning = (w: StoreWarning) => (w.code === "BAD_HEADER" ? notSessions++ : warn(w));
    const sessions = await SessionManager.listAll({ ...storeOptions(ctx), onWarning, includeArchived: true });
    const counter = new RefCounter();
    let sessionBytes = 0;
    for (const s of sessions) {
      sessionBytes += s.size;
      blobRefsOfFile(s.path, counter);
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
      sessions: sessions.length,
      sessionBytes,
      notSessions,
      blobs,
      blobBytes,
      references: refs,
      referencedBlobs: counter.counts.size,
      dedupRatio,
      space: await storeSpaceTotals(ctx),
    };
    ctx.emit(
      record,
      `sessions: ${sessions.length} (${formatBytes(sessionBytes)})\n` +
        (notSessions > 0 ? `          ${notSessions} other .jsonl file(s) are not sessions (ls --all names them)\n` : "") +
        `blobs:    ${blobs} (${formatBytes(blobBytes)})\n` +
        `refs:     ${refs} to ${counter.counts.size} blob(s), dedup ratio ${dedupRatio.toFixed(2)}×\n` +
        spaceTotalsText(record.space),
    );
    return 0;
  },
};
