import { constants } from "node:fs";
import { FILE_MODE, io, writeFully } from "../io.ts";

/** Rounds of catching up before giving up on a writer that keeps appending to a replaced file. */
const MAX_ROUNDS = 8;
const CHUNK = 1 << 20;

/**
 * Brings over what a plain writer (pi appends without our lock) appended to a file after it was
 * read up to `from`, through `oldFd`, a descriptor on the file before it was replaced: pi opens
 * the name for each line, so a line whose open came just before the rename lands in the replaced
 * file, which nothing would read again. Its bytes are appended to `target` as written (fsynced),
 * round after round until the old file stops growing. Returns the number of lines brought over.
 */
export function catchUpAppends(oldFd: number, from: number, target: string): number {
  let offset = from;
  let lines = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const size = io.fstatSync(oldFd).size;
    if (size <= offset) break;
    const out = io.openSync(target, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW, FILE_MODE);
    try {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, size - offset));
      while (offset < size) {
        const n = io.readSync(oldFd, buf, 0, Math.min(buf.length, size - offset), offset);
        if (n === 0) break;
        const bytes = buf.subarray(0, n);
        writeFully(out, bytes);
        for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) lines++;
        offset += n;
      }
      io.fsyncSync(out);
    } finally {
      io.closeSync(out);
    }
  }
  return lines;
}
