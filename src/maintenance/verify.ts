import { basename, dirname, join } from "node:path";
import { forEachBlobRef } from "../blob/blob-ref.ts";
import { BlobStore } from "../blob/blob-store.ts";
import { isKeyedBlobFile } from "../blob/keyed-blob-cipher.ts";
import { forEachKeyedBlobRef } from "../blob/keyed-blob-ref.ts";
import { errnoCode } from "../errors.ts";
import type { RawRecord, SessionHeader } from "../format/types.ts";
import { io } from "../io.ts";
import { scanSessionFile } from "../session/session-file-reader.ts";

export type FindingKind =
  | "BAD_HEADER"
  | "MALFORMED_LINE"
  | "GLUED_LINE"
  | "TORN_TAIL"
  | "BROKEN_PARENT"
  | "BLOB_MISSING"
  | "BLOB_CORRUPT"
  | "ORPHANED_ARTIFACTS"
  | "UNREADABLE";

/** One problem found by `verify`. */
export interface Finding {
  kind: FindingKind;
  path: string;
  message: string;
  line?: number;
}

export interface VerifyOptions {
  blobsDir: string;
  /** Re-hash every referenced blob (slower, catches corruption). @default true */
  rehash?: boolean;
}

export interface VerifyFileResult {
  path: string;
  entries: number;
  findings: Finding[];
  /**
   * What could not be checked, when something could not: an encrypted session is verified without
   * its key (header, line framing, torn tail, the blobs its lines list in clear, keyed blobs present
   * and sealed), not its entries' content, parent links or what its keyed blobs hold.
   */
  unchecked?: string;
}

/**
 * Checks one session file: header, malformed lines, torn tail, parent links that point nowhere,
 * and every referenced blob (present, and re-hashed unless `rehash: false`). Streams the file.
 */
export function verifySessionFile(
  path: string,
  options: VerifyOptions,
  checkedBlobs = new Map<string, Finding["kind"] | null>(),
): VerifyFileResult {
  const findings: Finding[] = [];
  const store = new BlobStore(options.blobsDir);
  const rehash = options.rehash !== false;
  const ids = new Set<string>();
  const parents: Array<{ parentId: string; id: string }> = [];
  const refs = new Set<string>();
  const keyedRefs = new Set<string>();
  let encrypted: string | null = null;
  let parsed;
  try {
    parsed = scanSessionFile(path, {
      // An encrypted line is not opened (no key here): it stands for one entry, its clear blob list is checked.
      openRecord: (record: RawRecord, header: SessionHeader, ordinal: number) => {
        if (header.encryption === undefined) return record;
        return { type: "encrypted", id: `encrypted line ${ordinal}` };
      },
      mapRecord: (record: RawRecord, text: string) => {
        if (typeof record.id === "string") ids.add(record.id);
        if (typeof record.parentId === "string") parents.push({ parentId: record.parentId, id: String(record.id) });
        forEachBlobRef(text, (hash) => refs.add(hash));
        forEachKeyedBlobRef(text, (hex) => keyedRefs.add(hex));
        return {};
      },
    });
  } catch (err) {
    return { path, entries: 0, findings: [{ kind: "UNREADABLE", path, message: (err as Error).message }] };
  }
  if (parsed === null) return { path, entries: 0, findings: [{ kind: "UNREADABLE", path, message: "file not found" }] };
  if (parsed.header === null) {
    findings.push({ kind: "BAD_HEADER", path, message: parsed.headerProblem ?? "no session header" });
    return { path, entries: 0, findings };
  }
  const encryption = (parsed.header as Record<string, unknown>).encryption as { keyId?: unknown } | undefined;
  if (encryption !== undefined) {
    encrypted =
      `encrypted (key id ${String(encryption.keyId)}): checked without its key; ` +
      "entry contents, parent links and what its keyed blobs hold are not checked";
  }
  for (const m of parsed.malformed)
    findings.push({ kind: "MALFORMED_LINE", path, line: m.line, message: `line ${m.line} (byte ${m.offset}): ${m.reason}` });
  // Lines holding several records glued together: readers load them one by one, migrate splits them.
  for (const g of parsed.repaired)
    findings.push({ kind: "GLUED_LINE", path, line: g.line, message: `line ${g.line} (byte ${g.offset}): ${g.reason}` });
  if (parsed.tornTail !== null)
    findings.push({
      kind: "TORN_TAIL",
      path,
      message: `unterminated final fragment of ${parsed.tornTail.bytes.length} bytes at byte ${parsed.tornTail.offset}`,
    });
  const version = typeof parsed.header.version === "number" ? parsed.header.version : 1;
  if (version >= 2) {
    for (const { parentId, id } of parents)
      if (!ids.has(parentId)) findings.push({ kind: "BROKEN_PARENT", path, message: `entry ${id} points at missing parent ${parentId}` });
  }
  for (const hash of refs) {
    let state = checkedBlobs.get(hash);
    if (state === undefined) {
      state = null;
      try {
        if (rehash) {
          if (store.getSync(hash, { verify: true }) === null) state = "BLOB_MISSING";
        } else if (!store.hasSync(hash)) state = "BLOB_MISSING";
      } catch (err) {
        state = (err as { code?: string }).code === "BLOB_CORRUPT" ? "BLOB_CORRUPT" : "BLOB_MISSING";
      }
      checkedBlobs.set(hash, state);
    }
    if (state !== null) findings.push({ kind: state, path, message: `${state === "BLOB_CORRUPT" ? "corrupt" : "missing"} blob ${hash}` });
  }
  for (const hex of keyedRefs) {
    const state = keyedBlobState(store, hex, rehash);
    if (state !== null)
      findings.push({ kind: state, path, message: `${state === "BLOB_CORRUPT" ? "not a keyed blob file:" : "missing"} keyed blob ${hex}` });
  }
  const result: VerifyFileResult = { path, entries: parsed.records.length, findings };
  if (encrypted !== null) result.unchecked = encrypted;
  return result;
}

/**
 * A keyed blob checked without the key: present, and (with `rehash`) a sealed keyed blob file; whether it holds what its
 * ref names takes the key (an open of the session reads it through authentication).
 */
function keyedBlobState(store: BlobStore, hex: string, rehash: boolean): Finding["kind"] | null {
  try {
    if (!rehash) return store.hasSync(hex) ? null : "BLOB_MISSING";
    const bytes = store.getSync(hex);
    if (bytes === null) return "BLOB_MISSING";
    return isKeyedBlobFile(bytes) ? null : "BLOB_CORRUPT";
  } catch (err) {
    return (err as { code?: string }).code === "BLOB_CORRUPT" ? "BLOB_CORRUPT" : "BLOB_MISSING";
  }
}

/** Artifacts directories (`<stem>/` beside sessions) whose session file `<stem>.jsonl` is gone. */
export function findOrphanedArtifactDirs(sessionFiles: readonly string[], bucketDirs: readonly string[]): Finding[] {
  const stems = new Set(sessionFiles.map((f) => f.slice(0, -".jsonl".length)));
  const findings: Finding[] = [];
  for (const dir of bucketDirs) {
    let entries;
    try {
      entries = io.readdirSync(dir, { withFileTypes: true });
    } catch (err) {
      if (errnoCode(err) === "ENOENT") continue;
      throw err;
    }
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith(".") || entry.name.endsWith(".lock")) continue;
      const stem = join(dir, entry.name);
      if (!/_/.test(entry.name) || stems.has(stem)) continue;
      if (io.existsSync(`${stem}.jsonl`)) continue;
      findings.push({ kind: "ORPHANED_ARTIFACTS", path: stem, message: `artifacts directory without its session ${basename(stem)}.jsonl` });
    }
  }
  return findings;
}

/** The distinct directories holding the given session files. */
export function bucketDirsOf(files: readonly string[]): string[] {
  return [...new Set(files.map((f) => dirname(f)))];
}
