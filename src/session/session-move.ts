import { createHash } from "node:crypto";
import { dirname } from "node:path";
import { errnoCode, TranscriptStoreError, type StoreWarning } from "../errors.ts";
import { copyFilePrivate, fsyncDir, io, syncFile, tempPathFor } from "../io.ts";
import { linkTree, sameTree } from "./artifact-dir-copy.ts";
import { incomingPathOf, journalPathOf, moveCommitted, readIncomingMove, readMoveJournal } from "./move-journal.ts";
import { writeIncomingMove, writeMoveJournal } from "./move-journal.ts";
import { artifactsDirOf, quarantinePathOf } from "./paths.ts";
import { renameIntoPlace, SessionFileDraft } from "./session-file.ts";
import { copyFileFrom, headerEndOffset } from "./session-file-reader.ts";

export { journalPathOf, incomingPathOf, readMoveJournal } from "./move-journal.ts";

export interface MovePlan {
  from: string;
  to: string;
  /** The header line to write at the new place (with its `\n`); null when no file exists yet. */
  headerLine: Buffer | null;
  fsync: boolean;
  warn: (w: StoreWarning) => void;
}

/**
 * Moves a session file, its artifacts directory and its quarantine file, all or nothing. A note
 * beside the destination and a journal beside the source come first, so a later open of either
 * path finishes or undoes a move a crash cut short. The new file is written beside its destination
 * (new header + the old body, byte for byte), its size and hash go into the journal, and it is
 * renamed into place (the commit); the old file is deleted last. Any failure undoes the steps done,
 * in reverse. Directories that cannot be renamed across devices are copied, verified, then deleted.
 * A session not written yet (`headerLine` null) moves its artifacts and quarantine only.
 */
export function moveSessionFiles(plan: MovePlan): void {
  const { from, to, headerLine } = plan;
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
      throw new TranscriptStoreError("MOVE_FAILED", `Move failed at "${name}" and was undone: ${(err as Error).message}`, {
        path: from,
        cause: err,
      });
    }
  };

  if (io.existsSync(to)) throw new TranscriptStoreError("SESSION_EXISTS", `A session already exists at ${to}`, { path: to });
  const temp = tempPathFor(to);

  if (headerLine !== null) {
    // The note lets an open of the destination find (and finish or undo) the move first.
    step("write move note at destination", () => {
      writeIncomingMove(to, { from });
      undo.push(() => io.rmSync(incomingPathOf(to), { force: true }));
    });
    step("write move journal", () => {
      writeMoveJournal(from, { to, temp });
      undo.push(() => io.rmSync(journalPathOf(from), { force: true }));
    });
    step("write new file", () => {
      undo.push(() => io.rmSync(temp, { force: true }));
      const identity = writeNewFile(from, to, temp, headerLine, plan.fsync);
      writeMoveJournal(from, { to, temp, ...identity });
    });
  }

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
          const copy = linkTree(src, dst, plan.warn, "copy", plan.fsync);
          if (copy.failed > 0 || !sameTree(src, dst)) throw new Error("cross-device copy could not be verified");
        } else {
          copyFilePrivate(src, dst);
          if (plan.fsync) syncFile(dst);
          if (!io.readFileSync(src).equals(io.readFileSync(dst))) throw new Error("cross-device copy could not be verified");
        }
        afterCommit.push(() => io.rmSync(src, { recursive: true, force: true }));
      }
    });
  }

  // A session not written yet moved only these: their directories are made durable here.
  if (headerLine === null && plan.fsync) {
    fsyncDir(dirname(to));
    fsyncDir(dirname(from));
  }

  if (headerLine !== null) {
    step("rename new file into place", () => {
      renameIntoPlace(temp, to, false);
      undo.push(() => io.unlinkSync(to));
      if (plan.fsync) fsyncDir(dirname(to)); // fails before the old file goes: undone
    });

    step("remove old file", () => {
      io.unlinkSync(from);
    });
    if (plan.fsync) {
      try {
        fsyncDir(dirname(from));
      } catch (err) {
        // The move committed: undoing it now would remove the only durable copy.
        plan.warn({
          code: "MOVE_FAILED",
          message: `Moved, but the old name's removal may not be durable: ${(err as Error).message}`,
          path: from,
        });
      }
    }

    // The note first: a journal left alone beside a removed old file only rolls forward again.
    for (const done of [incomingPathOf(to), journalPathOf(from)]) {
      try {
        io.unlinkSync(done);
      } catch {
        // harmless leftovers: a later open removes them
      }
    }
  }

  for (const cleanup of afterCommit) {
    try {
      cleanup();
    } catch (err) {
      plan.warn({ code: "MOVE_FAILED", message: `Moved, but the old copy could not be removed: ${(err as Error).message}`, path: from });
    }
  }
}

/** Writes header + the old body into the draft `temp` of `to`; returns its size and sha256. */
function writeNewFile(from: string, to: string, temp: string, headerLine: Buffer, fsync: boolean): { size: number; sha256: string } {
  const bodyStart = headerEndOffset(from);
  if (bodyStart === null) throw new Error("source has no header line");
  const hash = createHash("sha256");
  let size = 0;
  const draft = SessionFileDraft.begin(to, temp);
  try {
    const emit = (data: Buffer) => {
      draft.write(data);
      hash.update(data);
      size += data.length;
    };
    emit(headerLine);
    copyFileFrom(from, bodyStart, emit);
    if (fsync) draft.sync();
  } finally {
    draft.close();
  }
  return { size, sha256: hash.digest("hex") };
}

/**
 * Finishes or undoes a move a crash interrupted (the caller holds the locks of `from` and of the
 * journal's destination). The move rolls forward only on proof that it committed (see
 * `moveCommitted`): old file removed, artifacts and quarantine brought over; otherwise it rolls
 * back and a file at the destination is left alone. Returns where the session now lives, or null
 * when there was nothing to recover.
 */
export function recoverInterruptedMove(from: string): string | null {
  const journal = readMoveJournal(from);
  if (journal === null) return null;
  const { to, temp } = journal;
  const committed = moveCommitted(from, journal);
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
  if (readIncomingMove(to)?.from === from) io.rmSync(incomingPathOf(to), { force: true });
  io.rmSync(journalPathOf(from), { force: true });
  // Recovery is rare: its renames and removals are always made durable.
  fsyncDir(dirname(to));
  fsyncDir(dirname(from));
  return committed ? to : from;
}
