import { basename, dirname, join } from "node:path";
import { forEachBlobRef } from "../blob/blob-ref.ts";
import { BlobStore } from "../blob/blob-store.ts";
import { errnoCode } from "../errors.ts";
import type { RawRecord } from "../format/types.ts";
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
  let parsed;
  try {
    parsed = scanSessionFile(path, {
      mapRecord: (record: RawRecord, text: string) => {
        if (typeof record.id === "string") ids.add(record.id);
        if (typeof record.parentId === "string") parents.push({ parentId: record.parentId, id: String(record.id) });
        forEachBlobRef(text, (hash) => refs.add(hash));
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
  return { path, entries: parsed.records.length, findings };
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
