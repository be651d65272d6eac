/** A line that could not be read as an entry. Its raw bytes are preserved, never dropped. */
export interface MalformedLine {
  /** 1-based line number in the file. */
  line: number;
  /** Byte offset of the line's first byte. */
  offset: number;
  reason: string;
  /** The line's exact bytes, without the trailing LF (only a prefix when `length` is set). */
  bytes: Buffer;
  /** Set for a line too large to hold in memory: its whole length; its bytes stay in `source`. */
  length?: number;
  /** The file holding a too-large line's bytes, at `offset`. */
  source?: string;
}

/** What loading a session file found (docs/format.md, Damage and quarantine). */
export interface LoadReport {
  /** Lines read, including the header and blank lines. */
  linesRead: number;
  /** Entries loaded (header excluded). */
  entries: number;
  malformed: Array<Omit<MalformedLine, "bytes">>;
  /** Lines that held several records glued together; their records were loaded one by one. */
  repaired: Array<Omit<MalformedLine, "bytes">>;
  /** True when the file ended in an unterminated line that did not parse. */
  tornTail: boolean;
  /** Runs of NUL bytes that were skipped. */
  nulRuns: number;
  /** The file's version before migration, or null when it was already current (or new). */
  migratedFrom: number | null;
  /** Bytes scanned. */
  bytesRead: number;
}

export function emptyLoadReport(): LoadReport {
  return { linesRead: 0, entries: 0, malformed: [], repaired: [], tornTail: false, nulRuns: 0, migratedFrom: null, bytesRead: 0 };
}
