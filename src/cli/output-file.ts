import { dirname } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import { FILE_MODE, fsyncDir, io, removeQuietly, tempPathFor, writeFully } from "../io.ts";
import { publishNew } from "../io-exclusive.ts";

function outputExists(target: string): TranscriptStoreError {
  return new TranscriptStoreError("OUTPUT_EXISTS", `${target} already exists: not overwritten (choose another -o path, or --force)`, {
    path: target,
  });
}

/**
 * Writes `chunks` to a new file at `target` (`export -o`, `bundle -o`): into a temp file beside it,
 * then published only if nothing is there (`publishNew`: a file, a link, never followed, never
 * replaced), else `OUTPUT_EXISTS` with nothing written. A name already taken is refused before any
 * chunk is made; a failure midway leaves no file behind. With `force` (`--force`) a file already
 * there is replaced in one rename once the new one is complete (a link is replaced, never
 * followed; a directory is still refused). Returns the bytes written.
 */
export async function writeNewOutput(
  target: string,
  chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
  options: { force?: boolean } = {},
): Promise<number> {
  const there = io.lstatSync(target, { throwIfNoEntry: false });
  if (there !== undefined && (options.force !== true || there.isDirectory())) throw outputExists(target);
  const temp = tempPathFor(target);
  const fd = io.openSync(temp, "wx", FILE_MODE);
  let bytes = 0;
  try {
    try {
      for await (const chunk of chunks) {
        const data = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
        writeFully(fd, data);
        bytes += data.length;
      }
      io.fsyncSync(fd);
    } finally {
      io.closeSync(fd);
    }
    if (options.force === true) io.renameSync(temp, target);
    else if (!publishNew(temp, target)) throw outputExists(target);
    fsyncDir(dirname(target));
    return bytes;
  } finally {
    removeQuietly(temp);
  }
}
