import { dirname } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import { io } from "../io.ts";
import { incomingPathOf, moveCommitted, readIncomingMove, readMoveJournal } from "./move-journal.ts";
import { acquireSessionLock } from "./session-lock.ts";
import { recoverInterruptedMove } from "./session-move.ts";

export interface MoveRecoveryOptions {
  readOnly: boolean;
  lockStaleMs: number;
}

/** Runs `work` holding the lock of `path` (whose directory may not exist: then nothing is there). */
async function withLock<T>(path: string, staleMs: number, work: () => T): Promise<T> {
  if (!io.existsSync(dirname(path))) return work();
  const lock = await acquireSessionLock(path, { staleMs, onCompromised: () => {} });
  try {
    return work();
  } finally {
    await lock.release();
  }
}

/**
 * Before a session file is opened: finishes or undoes a move a crash interrupted, whichever side of
 * it `path` is (the caller holds the lock of `path`; the other side's lock is taken here). Throws
 * `SESSION_NOT_FOUND` when the session lives at the other place, so an open never starts a second
 * copy of it. A read-only open repairs nothing and only reports a committed move.
 */
export async function recoverMovesOnOpen(path: string, options: MoveRecoveryOptions): Promise<void> {
  if (options.readOnly) {
    const journal = readMoveJournal(path);
    if (journal !== null && moveCommitted(path, journal)) throw movedElsewhere(path, journal.to);
    return;
  }
  const journal = readMoveJournal(path);
  if (journal !== null) {
    const now = await withLock(journal.to, options.lockStaleMs, () => recoverInterruptedMove(path));
    if (now !== null && now !== path) throw movedElsewhere(path, now);
  }
  const incoming = readIncomingMove(path);
  if (incoming === null) return;
  const { from } = incoming;
  await withLock(from, options.lockStaleMs, () => {
    if (readMoveJournal(from)?.to === path) recoverInterruptedMove(from);
    io.rmSync(incomingPathOf(path), { force: true });
  });
  if (!io.existsSync(path) && io.existsSync(from)) {
    const message = `The session is at ${from}: its move here did not complete and was undone`;
    throw new TranscriptStoreError("SESSION_NOT_FOUND", message, { path });
  }
}

function movedElsewhere(path: string, to: string): TranscriptStoreError {
  return new TranscriptStoreError("SESSION_NOT_FOUND", `The session was moved to ${to}`, { path });
}
