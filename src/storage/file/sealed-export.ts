import { TranscriptStoreError } from "../../errors.ts";
import type { SessionHeader } from "../../format/types.ts";
import { io } from "../../io.ts";
import { KEYED_BLOB_REF_PREFIX } from "../../blob/keyed-blob-ref.ts";

/**
 * Whether the encrypted session file at `path` can be handed out as it is without its key: every
 * entry line a sealed object (`{"type":"encrypted",…}`) and the file ending in a newline. What cannot
 * be judged without the key (a torn or damaged line to repair) is `KEY_REQUIRED`: open it with the key.
 */
export async function checkSealedLines(path: string, header: SessionHeader, lines: AsyncIterable<string>): Promise<void> {
  let n = 0;
  for await (const line of lines) {
    if (n++ === 0) continue; // the header
    if (!line.startsWith('{"type":"encrypted"') || !line.endsWith("}")) {
      throw new TranscriptStoreError(
        "KEY_REQUIRED",
        `Session ${header.id} is encrypted and its line ${n} is not a sealed line: only its key can repair it (${path})`,
        { path },
      );
    }
    if (line.includes(KEYED_BLOB_REF_PREFIX)) {
      // Keyed blobs travel with neither a database (its blob table holds no keyed blobs) nor another
      // store's blob directory (a snapshot's blobs are checked by their sha256): moved, the refs would dangle.
      throw new TranscriptStoreError(
        "KEY_REQUIRED",
        `Session ${header.id} is encrypted and its line ${n} names keyed blobs (images): they cannot move with its sealed lines (${path})`,
        { path },
      );
    }
  }
  const size = io.statSync(path).size;
  if (size > 0) {
    const fd = io.openSync(path, "r");
    try {
      const last = Buffer.alloc(1);
      io.readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) {
        throw new TranscriptStoreError(
          "KEY_REQUIRED",
          `Session ${header.id} is encrypted and has a torn last line: only its key can repair it`,
          {
            path,
          },
        );
      }
    } finally {
      io.closeSync(fd);
    }
  }
}
