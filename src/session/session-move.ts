import { randomBytes } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { errnoCode, TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { FILE_MODE, fsyncDir, io, writeFully } from "../io.ts";
import { linkTree, sameTree } from "./artifact-dir-copy.ts";
import { artifactsDirOf, quarantinePathOf } from "./paths.ts";
import { copyFileFrom, headerEndOffset } from "./session-file.ts";

export interface MovePlan {
  from: string;
  to: string;
  /** The header line to write at the new place (with its `\n`). */
  headerLine: Buffer;
  fsync: boolean;
  warn: (w: StoreWarning) => void;
}

/**
 * Moves a session file, its artifacts directory and its quarantine file, all or nothing. The new
 * file is written beside its destination (new header + the old body, byte for byte) and renamed
 * into place; the old file is deleted last. Any failure undoes the steps done, in reverse.
 * Directories that cannot be renamed across devices are copied, verified, then deleted.
 */
export function moveSessionFiles(plan: MovePlan): void {
  const { from, to } = plan;
  const undo: Array<() => void> = [];
  const afterCommit: Array<() => void> = [];
  const step = (name: string, run: () => void) => {
    try {
      run();
    } catch (err) {
      for (const u of undo.reverse()) {
        try {
          u();
        } catch {
          // keep undoing: every step that can be undone must be
        }
      }
      throw new TranscriptStoreError("MOVE_FAILED", `Move failed at "${name}" and was undone: ${(err as Error).message}`, { path: from, cause: err });
    }
  };

  if (io.existsSync(to)) throw new TranscriptStoreError("MOVE_FAILED", `A session already exists at ${to}`, { path: to });
  const temp = join(dirname(to), `.${basename(to)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);

  step("write new file", () => {
    undo.push(() => io.rmSync(temp, { force: true }));
    const bodyStart = headerEndOffset(from);
    if (bodyStart === null) throw new Error("source has no header line");
    const fd = io.openSync(temp, "wx", FILE_MODE);
    try {
      writeFully(fd, plan.headerLine);
      copyFileFrom(from, bodyStart, (data) => writeFully(fd, data));
      if (plan.fsync) io.fsyncSync(fd);
    } finally {
      io.closeSync(fd);
    }
  });

  for (const [src, dst, label] of [
    [artifactsDirOf(from), artifactsDirOf(to), "move artifacts directory"],
    [quarantinePathOf(from), quarantinePathOf(to), "move quarantine file"],
  ] as const) {
    if (!io.existsSync(src)) continue;
    step(label, () => {
      if (io.existsSync(dst)) throw new Error(`${dst} already exists`);
      try {
        io.renameSync(src, dst);
        undo.push(() => io.renameSync(dst, src));
      } catch (err) {
        if (errnoCode(err) !== "EXDEV") throw err;
        undo.push(() => io.rmSync(dst, { recursive: true, force: true }));
        if (io.lstatSync(src).isDirectory()) {
          const copy = linkTree(src, dst, plan.warn, "copy");
          if (copy.failed > 0 || !sameTree(src, dst)) throw new Error("cross-device copy could not be verified");
        } else {
          io.copyFileSync(src, dst);
          if (!io.readFileSync(src).equals(io.readFileSync(dst))) throw new Error("cross-device copy could not be verified");
        }
        afterCommit.push(() => io.rmSync(src, { recursive: true, force: true }));
      }
    });
  }

  step("rename new file into place", () => {
    io.renameSync(temp, to);
    undo.push(() => io.unlinkSync(to));
    if (plan.fsync) fsyncDir(dirname(to));
  });

  step("remove old file", () => {
    io.unlinkSync(from);
    if (plan.fsync) fsyncDir(dirname(from));
  });

  for (const cleanup of afterCommit) {
    try {
      cleanup();
    } catch (err) {
      plan.warn({ code: "MOVE_FAILED", message: `Moved, but the old copy could not be removed: ${(err as Error).message}`, path: from });
    }
  }
}
