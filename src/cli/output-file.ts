import { TranscriptStoreError, errnoCode } from "../errors.ts";
import { FILE_MODE, io, removeQuietly, tempPathFor, writeFully } from "../io.ts";

/** What `link` fails with where the file system has no hard links for this file. */
const LINK_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK"]);

function outputExists(target: string): TranscriptStoreError {
  return new TranscriptStoreError("OUTPUT_EXISTS", `${target} already exists: not overwritten (choose another -o path)`, { path: target });
}

/**
 * Writes `chunks` to a new file at `target` (`export -o`): into a temp file beside it, then linked
 * to the name only if nothing is there (a file, a link: never followed, never replaced), else
 * `OUTPUT_EXISTS` with nothing written. A name already taken is refused before any chunk is made;
 * a failure midway leaves no file behind.
 */
export async function writeNewOutput(target: string, chunks: AsyncIterable<string> | Iterable<string>): Promise<number> {
  if (io.lstatSync(target, { throwIfNoEntry: false }) !== undefined) throw outputExists(target);
  const temp = tempPathFor(target);
  const fd = io.openSync(temp, "wx", FILE_MODE);
  let bytes = 0;
  try {
    try {
      for await (const chunk of chunks) {
        const data = Buffer.from(chunk, "utf8");
        writeFully(fd, data);
        bytes += data.length;
      }
      io.fsyncSync(fd);
    } finally {
      io.closeSync(fd);
    }
    try {
      io.linkSync(temp, target);
    } catch (err) {
      const code = errnoCode(err);
      if (code === "EEXIST") throw outputExists(target);
      if (code === undefined || !LINK_UNSUPPORTED.has(code)) throw err;
      if (io.lstatSync(target, { throwIfNoEntry: false }) !== undefined) throw outputExists(target);
      io.renameSync(temp, target);
    }
    return bytes;
  } finally {
    removeQuietly(temp);
  }
}
