/**
 * The layers of `src/`, lowest first (docs/architecture.md, "Rules"): every folder and carved-out file
 * of `src/` belongs to exactly one row (the longest matching path wins), and each row names exactly the
 * rows it may import, type-only imports included. A row names only rows above it in this list, so no
 * two layers import each other (scripts/import-rules.ts checks both). A folder of `src/` without a
 * row is a violation: add one when you add a folder.
 *
 * Rows that carve files out of a folder name what that folder holds besides its own layer.
 */

export interface Layer {
  /** How rules and messages name it. */
  name: string;
  /** Folders (ending in `/`), files, or name prefixes (ending in `*`), relative to the repository root. */
  paths: string[];
  /** What it owns, in a few words (the message of a violation quotes it). */
  owns: string;
  /** Exactly the layers it may import (besides itself), type-only imports included. */
  mayImport: string[];
  /** Of `mayImport`, those it may import types from only (erased: nothing of them loads with it). */
  typesOnly?: string[];
  /** Kept for readers of the older table: a top layer is imported only by those naming it (every layer is, now). */
  top?: boolean;
  /** The only Node built-ins it may import (no `node:fs`: it touches no disk). @default any */
  builtins?: string[];
  /** Pure: no disk, no process, no package (implies `builtins`). */
  pure?: boolean;
}

/** Node built-ins a pure layer may use: bytes, hashing, path text, string decoding. */
export const PURE_BUILTINS = ["node:buffer", "node:crypto", "node:path", "node:string_decoder", "node:util"];

const LOW = ["errors", "format", "blob-ref", "prepare", "io", "append-handles", "blob", "artifacts", "accounting", "crypto", "session"];

/** The layers, lowest first. One row per folder (or carved file) of `src/`; extend it when you add one. */
export const LAYERS: Layer[] = [
  { name: "errors", paths: ["src/errors.ts"], owns: "the closed set of error codes", mayImport: [], pure: true, builtins: PURE_BUILTINS },
  { name: "error-catalogue", paths: ["src/error-catalogue.ts"], owns: "what each error code means", mayImport: ["errors"], pure: true },
  {
    name: "format",
    paths: ["src/format/"],
    owns: "entry types, line scanning and parsing, the migrations (pure)",
    mayImport: ["errors"],
    pure: true,
    builtins: PURE_BUILTINS,
  },
  {
    name: "blob-ref",
    paths: ["src/blob/blob-ref.ts", "src/blob/keyed-blob-ref.ts", "src/blob/blobs.ts"],
    owns: "blob ref text and the Blobs interface (pure)",
    mayImport: ["errors"],
    pure: true,
    builtins: PURE_BUILTINS,
  },
  {
    name: "prepare",
    paths: ["src/prepare/"],
    owns: "the prepare-for-persistence pipeline (pure: it hashes, never writes)",
    mayImport: ["errors", "format", "blob-ref"],
    pure: true,
    builtins: PURE_BUILTINS,
  },
  { name: "io", paths: ["src/io.ts", "src/io-*", "src/io/"], owns: "the I/O seam and its file primitives", mayImport: ["errors"] },
  { name: "append-handles", paths: ["src/session/append-handles.ts"], owns: "the append descriptor budget", mayImport: ["errors", "io"] },
  {
    name: "blob",
    paths: ["src/blob/"],
    owns: "the content-addressed blob store",
    mayImport: ["errors", "io", "format", "blob-ref", "append-handles"],
  },
  {
    name: "artifacts",
    paths: ["src/artifacts/"],
    owns: "session-local artifacts",
    mayImport: ["errors", "io", "format", "blob-ref", "blob", "append-handles", "prepare"],
  },
  {
    name: "accounting",
    paths: ["src/accounting/"],
    owns: "bytes and usage of a session, reports (pure)",
    mayImport: ["errors", "format", "blob-ref"],
  },
  {
    name: "crypto",
    paths: ["src/crypto/"],
    owns: "encryption of lines and blobs, the store's keys and redaction keys",
    mayImport: ["errors", "format", "blob-ref", "prepare", "blob", "io"],
  },
  {
    name: "session",
    paths: ["src/session/"],
    owns: "the session core: session files, the append path, loading, discovery",
    mayImport: ["errors", "format", "blob-ref", "prepare", "io", "append-handles", "blob", "artifacts", "crypto"],
  },
  {
    name: "index-api",
    paths: [
      "src/search/index-types.ts",
      "src/search/refresh-report.ts",
      "src/search/entry-text.ts",
      // pure query text helpers both indexes use (word forms, the query parser, one hit per entry)
      "src/search/word-forms.ts",
      "src/search/search-sql.ts",
      "src/search/hit-copies.ts",
    ],
    owns: "the search index as the seam names it",
    mayImport: ["errors", "format"],
  },
  {
    name: "lifecycle-api",
    paths: ["src/lifecycle/lifecycle-driver.ts"],
    owns: "the lifecycle driver as the seam names it",
    mayImport: ["session"],
  },
  {
    name: "seam",
    paths: ["src/storage/", "src/session/session-options.ts"],
    owns: "the storage seam: StorageBackend, capabilities and drivers, snapshots, the registry, options",
    mayImport: [...LOW, "index-api", "lifecycle-api"],
  },
  {
    name: "index",
    paths: ["src/search/"],
    owns: "the file tree's search and listing index (SQLite), openSessionIndex",
    mayImport: ["errors", "format", "io", "artifacts", "accounting", "session", "index-api", "seam"],
  },
  {
    name: "file-lifecycle",
    paths: [
      "src/lifecycle/file-lifecycle.ts",
      "src/lifecycle/file-trash.ts",
      "src/lifecycle/lifecycle-log.ts",
      "src/lifecycle/retention-config.ts",
    ],
    owns: "the file tree's pins, archive and trash; retention config",
    mayImport: ["errors", "io", "blob", "session", "lifecycle-api", "seam"],
  },
  {
    name: "file-gc",
    paths: ["src/maintenance/gc.ts", "src/maintenance/gc-files.ts", "src/maintenance/blob-refs.ts"],
    owns: "the file tree's blob gc",
    mayImport: ["errors", "format", "blob-ref", "io", "blob", "session"],
  },
  {
    name: "file-backend",
    paths: ["src/storage/file/"],
    owns: "the file tree backend",
    mayImport: [...LOW, "lifecycle-api", "seam", "index", "file-lifecycle", "file-gc"],
  },
  {
    name: "database",
    paths: ["src/storage/postgres/db/"],
    owns: "the PostgreSQL layer (PgStore): rows, no disk, no sessions",
    mayImport: ["errors", "format", "blob-ref", "accounting", "index-api"],
    builtins: PURE_BUILTINS,
  },
  {
    name: "postgres-backend",
    paths: ["src/storage/postgres/"],
    owns: "the PostgreSQL backend over PgStore",
    mayImport: [...LOW, "index-api", "lifecycle-api", "seam", "database"],
  },
  {
    name: "wiring",
    paths: ["src/storage/backends.ts", "src/storage/builtin-backends.ts"],
    owns: "the registry's built-in backends and the default one",
    mayImport: ["seam", "file-backend", "postgres-backend"],
  },
  {
    name: "manager",
    paths: [
      "src/session/session-manager.ts",
      "src/storage/memory-session.ts",
      "src/storage/incognito-session.ts",
      "src/lifecycle/listing-flags.ts",
    ],
    owns: "SessionManager over the seam; in-memory and incognito sessions",
    mayImport: ["errors", "format", "io", "blob", "artifacts", "session", "seam", "wiring"],
  },
  {
    name: "maintenance",
    paths: ["src/maintenance/"],
    owns: "migrate, verify, redact, rekey, accounting over the store",
    mayImport: [...LOW, "seam", "index", "file-gc", "manager"],
  },
  {
    name: "lifecycle",
    paths: ["src/lifecycle/"],
    owns: "pin, archive, trash, prune over any store (the usage ledger records what it deletes)",
    mayImport: ["errors", "io", "session", "lifecycle-api", "seam", "file-lifecycle", "wiring", "maintenance"],
  },
  {
    name: "interchange",
    paths: ["src/interchange/"],
    owns: "other agents' formats in and out, export views",
    mayImport: ["errors", "format", "prepare", "io", "accounting", "session", "seam", "wiring", "manager"],
  },
  {
    name: "bundle",
    paths: ["src/bundle/"],
    owns: "bundles: sessions, blobs and artifacts in one tar archive",
    mayImport: ["errors", "format", "prepare", "io", "session", "seam", "wiring"],
  },
  {
    name: "pi",
    paths: ["src/pi/"],
    owns: "the pi adapter",
    mayImport: ["errors", "format", "prepare", "io", "blob", "session", "seam", "file-lifecycle"],
  },
  {
    name: "conformance",
    paths: ["src/conformance/"],
    owns: "the published conformance suite",
    mayImport: ["errors", "format", "seam", "manager"],
  },
  {
    name: "mcp",
    paths: ["src/mcp/"],
    owns: "the MCP server: search, show and usage as read-only tools",
    mayImport: ["errors", "format", "index-api", "index"],
  },
  {
    name: "viewer",
    paths: ["src/viewer/"],
    owns: "the local web viewer (serve): pages over the library's calls",
    mayImport: [...LOW, "index-api", "lifecycle-api", "seam", "index", "wiring", "manager", "lifecycle", "maintenance", "interchange"],
  },
  {
    name: "cli",
    paths: ["src/cli/"],
    owns: "the CLI: parse, call the library, print",
    mayImport: [
      ...LOW,
      "index-api",
      "lifecycle-api",
      "seam",
      "index",
      "file-lifecycle",
      "file-gc",
      "wiring",
      "manager",
      "lifecycle",
      "maintenance",
      "interchange",
      "bundle",
      "viewer",
      "mcp",
    ],
    top: true,
  },
  { name: "cli-loader", paths: ["src/cli/load-main.ts"], owns: "the library's `main`: loads the CLI when called", mayImport: ["cli"] },
  {
    name: "entry",
    paths: ["src/index.ts"],
    owns: "the package's entry: re-exports only",
    mayImport: [
      ...LOW,
      "error-catalogue",
      "index-api",
      "lifecycle-api",
      "seam",
      "index",
      "file-lifecycle",
      "file-gc",
      "database",
      "postgres-backend",
      "manager",
      "lifecycle",
      "maintenance",
      "interchange",
      "bundle",
      "cli-loader",
      "cli",
    ],
    // the library loads without the CLI's dependencies: its types only (`main` is the loader's)
    typesOnly: ["cli"],
    top: true,
  },
];
