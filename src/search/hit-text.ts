import { decodeLine, stripBom } from "../format/decode-line.ts";
import { io } from "../io.ts";
import { ArtifactReader } from "./artifact-text.ts";
import { entryTexts } from "./entry-text.ts";

/** Where a hit's text is: the entry's line in its session file. */
export interface HitLine {
  path: string;
  entryId: string;
  role: string;
  lineOffset: number;
  lineLength: number;
}

/**
 * The text a hit was indexed from, read back from its session line (the index keeps no copy of
 * the texts): the entry's text of that role, with the heads of the artifacts it points to. Null
 * when the line is no longer there (the file was rewritten since).
 */
export function readHitText(hit: HitLine, readers: Map<string, ArtifactReader>): string | null {
  let fd: number;
  try {
    fd = io.openSync(hit.path, "r");
  } catch {
    return null;
  }
  const bytes = Buffer.allocUnsafe(hit.lineLength);
  try {
    let done = 0;
    while (done < bytes.length) {
      const n = io.readSync(fd, bytes, done, bytes.length - done, hit.lineOffset + done);
      if (n <= 0) return null;
      done += n;
    }
  } finally {
    io.closeSync(fd);
  }
  const decoded = decodeLine(hit.lineOffset === 0 ? stripBom(bytes) : bytes);
  const records = decoded.kind === "record" ? [decoded.value] : decoded.kind === "glued" ? decoded.values : [];
  for (const record of records) {
    if (typeof record.id === "string" && record.id.length > 0 && record.id !== hit.entryId) continue;
    const text = entryTexts(record).find((t) => t.role === hit.role);
    if (text === undefined) continue;
    const reader = readers.get(hit.path) ?? new ArtifactReader(hit.path);
    readers.set(hit.path, reader);
    return reader.withArtifacts(text, { artifactBytesRead: 0 });
  }
  return null;
}
