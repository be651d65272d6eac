/** One line to append: the exact JSONL line as prepared (no trailing newline) and what listing and gc need from it. */
export interface PgLine {
  line: string;
  /** The entry's `id`, when it has one. */
  entryId: string | null;
  /** The entry's `type` (`"message"` lines are counted for listing). */
  kind: string | null;
  /** Preview text when this line is the session's first user message (listing shows the first one given). */
  firstMessage?: string | null;
  /** Hashes (64 lowercase hex) or `blob:sha256:` refs this line references; each must be stored or in the batch's blobs. */
  blobRefs?: readonly string[];
}

/** Blob bytes to store in the same transaction as the lines that reference them. */
export interface PgBlobWrite {
  sha256: string;
  bytes: Uint8Array;
}

/** A stored entry line. */
export interface PgEntry {
  seq: number;
  entryId: string | null;
  kind: string | null;
  line: string;
}

/** What listing and opening know about a session, from its row alone. */
export interface PgSessionInfo {
  id: string;
  cwd: string;
  /** The header's title (omp). */
  title: string | null;
  /** pi's session name: the latest `session_info` entry's (trimmed), null when none or cleared by an empty one. */
  sessionName: string | null;
  created: Date;
  modified: Date;
  parentSession: string | null;
  /** The listing preview of the first user message (NUL and lone surrogates as U+FFFD: column-text.ts). */
  firstMessage: string | null;
  /** That message's line, when the preview holds U+FFFD (it may stand for what the column could not hold). */
  firstMessageLine?: string;
  messageCount: number;
  /** The seq of the last entry (0: header only); the next append starts at `lastSeq + 1`. */
  lastSeq: number;
  /** Bytes of the session as JSONL (the header and every entry line, each with its newline). */
  size: number;
}

/** A session row with its header line. */
export interface PgSession extends PgSessionInfo {
  /** The exact header line (line 1 of the JSONL export). */
  header: string;
}

/** The outcome of `appendBatch`. */
export interface PgAppendResult {
  /** Seqs now stored for the batch (`firstSeq` … `lastSeq`). */
  firstSeq: number;
  lastSeq: number;
  /** Lines that were already stored (a retry after an ambiguous commit): checked equal, not inserted again. */
  alreadyStored: number;
}

/** Taking a lease together with creating or forking a session. */
export interface PgLeaseRequest {
  holder: string;
  ttlMs: number;
}
