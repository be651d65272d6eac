import { constants } from "node:fs";
import type { BlobStore } from "../blob/blob-store.ts";
import { isBlobRef, parseBlobRef, blobHashOf } from "../blob/blob-ref.ts";
import { splitGluedObjects } from "../format/split-glued.ts";
import { io } from "../io.ts";
import { mapImagePayloads } from "../prepare/image-shapes.ts";
import { payloadBytes } from "../prepare/externalize-images.ts";
import type { BlobReader } from "./rehydrate.ts";

/** Where an image's bytes can be read back: a line of the session file that holds it inline. */
interface LineLocation {
  offset: number;
  length: number;
}

/**
 * The inline images a lazy open replaced by blob refs in memory without storing them: each hash
 * points at the session-file line that still holds the image. Memory therefore relies on the
 * session file itself, never on a blob that no file references (a gc could collect it), and a
 * read-only open writes nothing. Reads re-parse that one line and check the hash.
 */
export class InlineImageSources {
  private readonly lines = new Map<string, LineLocation>();
  private shift = 0;

  constructor(private readonly path: () => string | null) {}

  get size(): number {
    return this.lines.size;
  }

  /** Records that `hash`'s payload sits inline in the line at `offset` (of `length` bytes). */
  add(hash: string, offset: number, length: number): void {
    if (!this.lines.has(hash)) this.lines.set(hash, { offset: offset - this.shift, length });
  }

  /** The file's body moved by `delta` bytes (a header rewritten with another length). */
  moved(delta: number): void {
    this.shift += delta;
  }

  /** The file no longer holds the images inline (rewritten with refs whose blobs were stored). */
  clear(): void {
    this.lines.clear();
    this.shift = 0;
  }

  has(hash: string): boolean {
    return this.lines.has(hash);
  }

  /**
   * `value` with the refs this open made up put back as the inline payloads the file holds (refs
   * the file itself holds are kept): what the file says, for an export that keeps refs.
   */
  restore<T>(value: T): T {
    if (this.lines.size === 0) return value;
    return mapImagePayloads(value, (payload, kind) => {
      if (!isBlobRef(payload)) return payload;
      const hash = parseBlobRef(payload);
      const bytes = this.lines.has(hash) ? this.bytesOf(hash) : null;
      if (bytes === null) return payload;
      return kind === "base64" ? bytes.toString("base64") : bytes.toString("utf8");
    });
  }

  /** The blob bytes of `hash` read back from its line, or null when the line no longer has them. */
  bytesOf(hash: string): Buffer | null {
    const at = this.lines.get(hash);
    const path = this.path();
    if (at === undefined || path === null) return null;
    let text: string;
    let fd: number | undefined;
    try {
      fd = io.openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
      const buf = Buffer.allocUnsafe(at.length);
      const n = io.readSync(fd, buf, 0, at.length, at.offset + this.shift);
      text = buf.toString("utf8", 0, n);
    } catch {
      return null;
    } finally {
      if (fd !== undefined) io.closeSync(fd);
    }
    let found: Buffer | null = null;
    for (const record of recordsOf(text)) {
      mapImagePayloads(record, (payload, kind) => {
        if (found !== null) return payload;
        const bytes = payloadBytes(payload, kind, 0);
        if (bytes !== null && blobHashOf(bytes) === hash) found = bytes;
        return payload;
      });
      if (found !== null) break;
    }
    return found;
  }
}

/** The records of one line: itself, or each record of a line of glued records. */
function recordsOf(text: string): unknown[] {
  try {
    return [JSON.parse(text)];
  } catch {
    const parts = splitGluedObjects(text);
    if (parts === null) return [];
    const records: unknown[] = [];
    for (const part of parts) {
      try {
        records.push(JSON.parse(part));
      } catch {
        // not one of the records
      }
    }
    return records;
  }
}

/**
 * Reads a blob for rehydration: from the session line that still holds it inline when there is
 * one (the file is the authority; its bytes are hash-checked there), else from the store, verified.
 */
export function blobReader(blobs: BlobStore, sources: InlineImageSources): BlobReader {
  return {
    pathOf: (ref) => blobs.pathOf(ref),
    getVerifiedSync: (ref) => {
      const hash = parseBlobRef(ref);
      if (sources.has(hash)) {
        const inline = sources.bytesOf(hash);
        if (inline !== null) return inline;
      }
      return blobs.getVerifiedSync(ref);
    },
  };
}
