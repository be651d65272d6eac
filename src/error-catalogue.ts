import type { ErrorCode, WarningCode } from "./errors.ts";

/** One error code explained: what it means, when code raises it, what a caller does about it. */
export interface ErrorCodeDoc {
  /** What happened, in one sentence. */
  meaning: string;
  /** When to raise it: the case it is for (and, where a neighbour is close, which one it is not). */
  use: string;
  /** What the caller should do on meeting it. */
  caller: string;
}

/**
 * The catalogue of every code a `TranscriptStoreError` is thrown with (docs/errors.md and the
 * README's list are checked against it by test/docs/error-catalogue.test.ts). Adding a code to
 * `ERROR_CODES` without an entry here fails the type-check.
 */
export const THROWN_CODES = {
  SESSION_LOCKED: {
    meaning: "Another writer holds the session (its lock file, or its database lease).",
    use: "A writable open, or a write, meets a session someone else is writing.",
    caller: "Open it read-only, wait for the other writer to close it, or fork it (`forkFrom` needs no lock).",
  },
  SESSION_NOT_FOUND: {
    meaning: "No session has the given path, id or id prefix.",
    use: "A lookup by path, id or prefix finds nothing (not for an entry or an artifact inside a session).",
    caller: "Check the id or the store (`--root`, `--store`); `ls` lists what the store holds.",
  },
  SESSION_AMBIGUOUS: {
    meaning: "An id prefix or name matches more than one session.",
    use: "A prefix lookup finds several sessions; the message names them.",
    caller: "Give a longer prefix or the whole id.",
  },
  SESSION_EXISTS: {
    meaning: "A session is already where a new one was to be created: the same id in the store, or a file at the path.",
    use: "Creating, copying, importing or moving a session onto a place another session holds; nothing is replaced.",
    caller: "Leave the existing session alone: pick another id, cwd or path, or open the existing session instead.",
  },
  OUTPUT_EXISTS: {
    meaning: "The file an operation writes is already there (another file, or a link planted at its name).",
    use:
      "A write that must create its output new finds the name taken, or the search index's path holds a file the index " +
      "cannot prove its own; the existing file is left as it was.",
    caller: "Remove or rename what is at that path, or choose another output name, and run it again.",
  },
  BAD_HEADER: {
    meaning: "A session's header (its first line or row) is missing, unreadable or names another session.",
    use: "The header cannot be parsed or validated; not for a damaged line later in the body (that is a warning).",
    caller: "The file is not a session, or its first line is damaged: `verify` reports it; nothing was changed.",
  },
  READ_ONLY: {
    meaning: "The session was opened read-only, or is closed, and a write was attempted.",
    use: "A write through a manager that must not write (read-only open, after `close`, after losing the lock).",
    caller: "Open the session writable (one writer at a time) before appending.",
  },
  ENTRY_NOT_FOUND: {
    meaning: "No entry with the given id (or sequence number) is in the session.",
    use: "A branch, fork point, label or leaf names an entry the session does not hold.",
    caller: "Use an id from `getEntries()` / `getTree()` of this session.",
  },
  PERSISTENCE_FAILED: {
    meaning: "The store could not be read or written: an I/O error, a lost database connection, a value that cannot be stored.",
    use: "The underlying write or read failed (the `cause` holds the system error); not for a case that has its own code.",
    caller: "Nothing was acknowledged that is not stored: fix the cause (disk, permissions, connection) and retry.",
  },
  INVALID_BLOB_REF: {
    meaning: "A string is not a well-formed blob ref (`blob:sha256:` and 64 lowercase hex digits).",
    use: "A caller passes a malformed ref or hash to the blob store.",
    caller: "Pass a ref as the store returned it (`put` gives `ref` and `hash`).",
  },
  BLOB_CORRUPT: {
    meaning: "A stored blob's bytes do not hash to its name.",
    use: "Reading a blob finds content that does not match its sha256.",
    caller: "The blob is damaged: restore it from another copy; `verify` lists every corrupt blob.",
  },
  BLOB_MISSING: {
    meaning: "A blob a session references is not in the store.",
    use: "A read, rehydration or import needs a blob that is stored nowhere it can look.",
    caller: "Copy the blob store along with the sessions, or point `--blobs-dir` at the right one.",
  },
  ARTIFACT_NOT_FOUND: {
    meaning: "No artifact with the given id is in the session.",
    use: "An artifact lookup (or an `artifact://` URL) names one the session does not hold.",
    caller: "Use an id from `artifacts.list()` of the same session.",
  },
  INVALID_ARTIFACT_ID: {
    meaning: "An artifact or agent-output id is malformed (empty, too long, or holding characters a file name cannot).",
    use: "Validating an id given by a caller, before any file is touched.",
    caller: "Use an id the store allocated, or one of the allowed characters and length.",
  },
  NO_SESSION: {
    meaning: "The operation needs a persisted session, and this manager has none (in-memory).",
    use: "Asking an in-memory manager for files, artifacts or a move.",
    caller: "Create the session with a store (`root`, `sessionsDir` or `store`) to use this.",
  },
  INVALID_QUERY: {
    meaning: "An `agent://` or artifact URL, path or query is malformed.",
    use: "Parsing a URL or JSON query the caller wrote.",
    caller: "Fix the URL or query (docs/artifacts.md describes the syntax).",
  },
  MOVE_FAILED: {
    meaning: "Moving a session (file, artifacts, quarantine) failed partway and was undone.",
    use: "A step of `moveTo` failed after it began; not when the destination is taken (`SESSION_EXISTS`).",
    caller: "The session is where it was: fix the cause in the message and move it again.",
  },
  INVALID_OPTION: {
    meaning: "An option, argument or record given by the caller is invalid.",
    use: "Validating input at the API or CLI boundary (one message per bad value), before anything is written.",
    caller: "Fix the value the message names.",
  },
  REFERRER_MISSING: {
    meaning: "gc refuses: a place that may reference the blob store is missing or unreadable.",
    use: "gc cannot prove a blob unreferenced because a registered referrer cannot be read.",
    caller: "Restore the place, or drop it from the registry with `gc --forget`, then run gc again.",
  },
  STORE_BUSY: {
    meaning: "Another gc or forget holds the blob store.",
    use: "gc or forget cannot take the blob store's lock.",
    caller: "Wait for the other gc to finish and run it again.",
  },
  IMPORT_CONFLICT: {
    meaning: "An import meets a store copy of the session with other content (both changed, or the source moved to another cwd).",
    use: "Re-importing a session that diverged from its store copy; both copies are kept, nothing is overwritten.",
    caller: "Decide which copy wins: fork one, or move the store copy with `mv` and import again.",
  },
  NO_INPUT: {
    meaning: "`import` read nothing: stdin was empty.",
    use: "A command that reads a session from stdin got no bytes.",
    caller: "Pipe a session in (`export <id> | import`) or name a file.",
  },
  SCHEMA_MISMATCH: {
    meaning: "A read-only PostgreSQL connection found no schema, or one of another version.",
    use: "A read-only database store meets a schema it must not create or migrate.",
    caller: "Open the database once writable (which creates or upgrades the schema), or use a library of its version.",
  },
  INDEX_UNAVAILABLE: {
    meaning:
      "The search index cannot be used here: no `node:sqlite` in the runtime, or the database's index tables missing or not writable.",
    use: "Opening or searching an index where none can be kept (no SQLite, a read-only database without its tables, an old schema).",
    caller: "Everything but search works: search from a runtime or connection that can keep the index, or let a writer build it.",
  },
  INVALID_CONFIG: {
    meaning: "The store's retention config is not valid: an unknown key, a wrong type, a bad value, or a missing file.",
    use: "Loading `<root>/config.json` or the file `TRANSCRIPT_STORE_RETENTION` names; nothing is touched when it fails.",
    caller: "Fix the file the message names (docs/lifecycle.md), or unset the variable.",
  },
  BUNDLE_CORRUPT: {
    meaning: "A bundle does not match its manifest: a member damaged, missing, extra or named outside it, or the archive cut short.",
    use: "`unbundle` checks every member before it writes; any mismatch refuses the whole bundle, nothing written.",
    caller: "Make or copy the bundle again from its source; nothing in the store changed.",
  },
  SESSION_PINNED: {
    meaning: "The session is pinned, and the operation would remove it.",
    use: "`rm` (or a prune meeting a session pinned meanwhile) of a pinned session; prune itself never selects one.",
    caller: "Unpin it first if it really should go.",
  },
  KEY_REQUIRED: {
    meaning: "The session is encrypted and no key was given (or the key provider gave none).",
    use: "Opening, forking or reading an encrypted session without `encryption`, or a reader that does not decrypt (migrate, verify).",
    caller: "Pass `encryption: { key }` or `{ keyProvider }` with the key the header's key id names; nothing was read or written.",
  },
  DECRYPT_FAILED: {
    meaning: "An encrypted session cannot be decrypted: another key, or a line that fails authentication.",
    use: "A key whose id is not the header's, or a line tampered with, moved, swapped or copied from another session; never served.",
    caller: "Use the right key; a line that fails under the right key was altered: restore the file from a backup (it was left as it was).",
  },
  NOT_SUPPORTED: {
    meaning: "The store does not support what was asked: its backend does not declare that capability (`supports`).",
    use: "stats, verify, du, usage, redact --store, rekey --store, lifecycle, search or encryption against a store whose backend lacks it.",
    caller: "Use a store that supports it (the message names the capability), or do without.",
  },
  NOT_ENCRYPTED: {
    meaning: "A plain session where encryption is required (`encryption.require`, or `encryption.require` in `<root>/config.json`).",
    use: "Opening a session whose header names no encryption: a plain file put in place of an encrypted one (downgrade by replacement).",
    caller: "Nothing of it was served and it was left as it is: restore the encrypted file from a backup, or encrypt it (`rekey`).",
  },
} as const satisfies Record<ErrorCode, ErrorCodeDoc>;

/** Codes only ever delivered to `onWarning`, never thrown (the thrown codes may be warnings too). */
export const WARNING_ONLY_CODES = {
  TORN_TAIL_REPAIRED: {
    meaning: "A session file ended in a partial line (a crash mid-append); it was cut off before the next write.",
    use: "Repairing the tail of a file before appending to it.",
    caller: "Nothing to do: the cut bytes are kept in the quarantine file beside the session.",
  },
  MALFORMED_LINES: {
    meaning: "Some lines of a session could not be parsed and were skipped.",
    use: "Reading a session whose body holds damaged lines; they are reported and preserved, never dropped.",
    caller: "The rest of the session loaded: `verify` names the lines; they are kept (and quarantined on a rewrite).",
  },
  LOCK_COMPROMISED: {
    meaning: "The session's lock was lost while it was held (removed, or taken over as stale).",
    use: "The lock keeper sees the lock is no longer ours.",
    caller: "Appends now fail: reopen the session to write again.",
  },
  NUL_BYTES_SKIPPED: {
    meaning: "Runs of NUL bytes (left by a crash on some file systems) were skipped while reading.",
    use: "Reading a session file that holds NUL runs between lines.",
    caller: "Nothing to do: the entries around them loaded.",
  },
  ARTIFACT_COPY_FAILED: {
    meaning: "Some artifact files could not be copied with a fork or move (unreadable, or a symlink that is never followed).",
    use: "Copying an artifacts directory finds a file it cannot or must not copy.",
    caller: "The session was copied; the named artifact is not in the copy.",
  },
  IMAGE_NOT_EXTERNALIZED: {
    meaning: "An image payload was kept inline in the transcript instead of going to the blob store.",
    use: "An image that is not base64, or could not be stored as a blob, stays whole in its line.",
    caller: "Nothing is lost: the image is stored whole in its line.",
  },
  IMAGE_TOO_LARGE: {
    meaning: "An image blob is too large for one string and stays a ref in memory.",
    use: "Rehydrating an image whose bytes exceed the largest string the runtime holds.",
    caller: "Read the blob through the blob store (`blobs.get(ref)`) instead of the entry.",
  },
  GLUED_RECORDS_SPLIT: {
    meaning: "Two records were found on one line (a writer lost a newline) and were split.",
    use: "Reading a line that holds two whole JSON records back to back.",
    caller: "Nothing to do: both entries loaded; `verify` names the line.",
  },
  SECRET_REDACTED: {
    meaning: "Secrets in an entry, an artifact or an export were replaced by markers (rule ids and counts are reported, never the secret).",
    use: "The redaction stage (`redact` option), `export` (NDJSON, the views, `--to claude-code|codex`) or `redact` changed text.",
    caller: "Nothing to do; `--no-redact` (export) or no `redact` option (writes) keeps the text as given.",
  },
  INDEX_REBUILT: {
    meaning: "The search index file was damaged, or of another version or tree, and was rebuilt from the sessions.",
    use: "Opening an index whose file cannot be used as it is; the sessions are the source of truth, so nothing is lost.",
    caller: "Nothing to do; a rebuild of a large store takes a while once.",
  },
  EXTENSION_KEPT: {
    meaning: "An export to another agent's format met an entry (or part of one) it has no form for; kept in the export's extension.",
    use: "`export --to claude-code|codex` converting a session not imported from that agent (docs/interchange.md, Converting).",
    caller: "Nothing is lost: re-importing the file keeps the extension record whole; the agent itself does not see that part.",
  },
  PLAIN_SESSION: {
    meaning: "A session opened with an encryption key is plain (its header names no encryption): it is served in clear.",
    use: "Opening a plain session with `encryption` but no `require`: a session never encrypted, or a plain file put in its place.",
    caller: "If every session should be encrypted, pass `encryption.require` (or set it in `<root>/config.json`) to refuse such a file.",
  },
  EXPORT_INCOMPLETE: {
    meaning: "An export to an agent's transcript (one path, no branches) left out entries on another branch than the one exported.",
    use: "`export --to claude-code|codex` without `--branch` of a session with branches (a fork, or a continuation here beside the path).",
    caller: "The CLI exits 1. Export the other branch too (`--branch <entry>`); the session itself is unchanged.",
  },
} as const satisfies Record<Exclude<WarningCode, ErrorCode>, ErrorCodeDoc>;

/** Every code with its documentation, thrown codes first, each list in catalogue order. */
export const ERROR_CATALOGUE: ReadonlyArray<ErrorCodeDoc & { code: WarningCode; kind: "thrown" | "warning" }> = [
  ...Object.entries(THROWN_CODES).map(([code, doc]) => ({ code: code as WarningCode, kind: "thrown" as const, ...doc })),
  ...Object.entries(WARNING_ONLY_CODES).map(([code, doc]) => ({ code: code as WarningCode, kind: "warning" as const, ...doc })),
];
