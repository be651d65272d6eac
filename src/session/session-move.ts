import { dirname } from "node:path";
import { errnoCode, TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { FILE_MODE, fsyncDir, io, tempPathFor, writeFully } from "../io.ts";
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
  const temp = tempPathFor(to);

  // The journal lets a later open finish or undo a move that a crash interrupted.
  step("write move journal", () => {
    writeJournal(from, { to, temp });
    undo.push(() => io.rmSync(journalPathOf(from), { force: true }));
  });

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

  try {
    io.unlinkSync(journalPathOf(from));
  } catch {
    // a leftover journal whose destination exists only rolls forward again: harmless
  }

  for (const cleanup of afterCommit) {
    try {
      cleanup();
    } catch (err) {
      plan.warn({ code: "MOVE_FAILED", message: `Moved, but the old copy could not be removed: ${(err as Error).message}`, path: from });
    }
  }
}

interface MoveJournal {
  to: string;
  temp: string;
}

/** `<stem>.move.json` beside the session being moved. */
export function journalPathOf(sessionFile: string): string {
  return `${artifactsDirOf(sessionFile)}.move.json`;
}

function writeJournal(from: string, journal: MoveJournal): void {
  const path = journalPathOf(from);
  const fd = io.openSync(path, "w", FILE_MODE);
  try {
    writeFully(fd, Buffer.from(JSON.stringify(journal)));
    io.fsyncSync(fd);
  } finally {
    io.closeSync(fd);
  }
  fsyncDir(dirname(path));
}

/** Reads a move journal left beside `sessionFile`, or null. */
export function readMoveJournal(sessionFile: string): MoveJournal | null {
  try {
    const value = JSON.parse(io.readFileSync(journalPathOf(sessionFile), "utf8")) as Partial<MoveJournal>;
    return typeof value.to === "string" && typeof value.temp === "string" ? { to: value.to, temp: value.temp } : null;
  } catch {
    return null;
  }
}

/**
 * Finishes or undoes a move a crash interrupted (the caller holds the lock of `from`). The rename
 * of the new file into place is the commit point: if the destination exists the move rolls
 * forward (old file removed, artifacts and quarantine brought over), otherwise it rolls back.
 * Returns where the session now lives, or null when there was nothing to recover.
 */
export function recoverInterruptedMove(from: string): string | null {
  const journal = readMoveJournal(from);
  if (journal === null) return null;
  const { to, temp } = journal;
  const committed = io.existsSync(to);
  const pairs: Array<[string, string]> = [
    [artifactsDirOf(from), artifactsDirOf(to)],
    [quarantinePathOf(from), quarantinePathOf(to)],
  ];
  for (const [src, dst] of pairs) {
    // Forward: bring what is still at the old place over. Back: return it, dropping a partial copy.
    const [here, there] = committed ? [src, dst] : [dst, src];
    if (!io.existsSync(here)) continue;
    if (io.existsSync(there)) io.rmSync(here, { recursive: true, force: true });
    else io.renameSync(here, there);
  }
  if (committed) io.rmSync(from, { force: true });
  io.rmSync(temp, { force: true });
  io.rmSync(journalPathOf(from), { force: true });
  return committed ? to : from;
}
