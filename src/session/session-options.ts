import { TranscriptStoreError, type WarningHandler } from "../errors.ts";
import { unsupported } from "../storage/capabilities.ts";
import { resolvePrepareOptions, type PrepareOptions, type ResolvedPrepareOptions } from "../prepare/pipeline.ts";
import { detectLayout, resolveStoreDirs, SESSION_LAYOUTS, type SessionLayout } from "./paths.ts";
import type { StorageBackend } from "../storage/session-storage.ts";
import { storeFromUrl } from "../storage/store-url.ts";
import { storeUrlForms } from "../storage/backend-registry.ts";
import { DEFAULT_LOCK_STALE_MS } from "./session-lock.ts";
import { DEFAULT_CHUNK_SIZE } from "./session-file-reader.ts";
import { describeCounts, redactSecretsStage, resolveRedactRules, SecretRedactor, type RedactOption } from "../prepare/redact-secrets.ts";
import type { PrepareStage } from "../prepare/pipeline.ts";
import { RedactionKeySlot } from "../crypto/redaction-key-slot.ts";
import { readStoreSettings, settingsPath } from "./store-settings.ts";
import { defaultRoot } from "./paths.ts";
import { resolve } from "node:path";
import { resolveEncryption, type EncryptionOptions, type ResolvedEncryption } from "./encryption-options.ts";

import type { RehydrateMode } from "./rehydrate.ts";
export type { RehydrateMode };

/** Options of every SessionManager factory. */
export interface SessionManagerOptions extends PrepareOptions {
  /** Store root. @default $TRANSCRIPT_STORE_HOME, else ~/.transcript-store */
  root?: string;
  /** @default <root>/sessions */
  sessionsDir?: string;
  /** @default <root>/blobs */
  blobsDir?: string;
  /**
   * How cwd buckets are named: `omp` (`-<home-relative>`) or `pi` (`--<absolute path>--`, as pi
   * 0.73.1 names them). @default detected from the sessions tree when unambiguous, else "omp"
   */
  layout?: SessionLayout;
  /** Data-sync every append and fsync rewrites and blobs. @default false */
  fsync?: boolean;
  /** Resolve blob refs while loading (`eager`) or on demand (`lazy`). @default "eager" */
  rehydrate?: RehydrateMode;
  /** Write nothing until the first assistant message, like pi. @default false */
  deferUntilAssistant?: boolean;
  /** Receives non-fatal problems. @default ignore */
  onWarning?: WarningHandler;
  /** Open without the lock and refuse writes (`open` only). @default false */
  readOnly?: boolean;
  /** Age after which a dead writer's lock is taken over (min 2000). @default 10000 */
  lockStaleMs?: number;
  /** Bytes per read while scanning. @default 1 MiB */
  chunkSize?: number;
  /** cwd recorded for a session created by `open` on an absent file. @default process.cwd() */
  cwd?: string;
  /** Clock for timestamps. @default () => new Date() */
  now?: () => Date;
  /**
   * Where sessions live: a backend object (e.g. a shared PostgreSQL store) or a store URL (a registered backend's scheme).
   * @default the file tree under `root`
   */
  store?: StorageBackend | string;
  /**
   * Redact secrets before anything reaches disk or the database (`"secrets"`: the built-in rules;
   * `{ rules, builtin }` adds rules of your own). Memory keeps what was given. Each secret becomes
   * `[REDACTED:<rule>:<hash>]`, the hash an HMAC under the store's key (`<root>/redaction.key`).
   * @default off: what is written is what was given
   */
  redact?: RedactOption;
  /**
   * The key of the redaction markers (32 bytes), shared by the stores given it: their markers agree.
   * @default $TRANSCRIPT_STORE_REDACTION_KEY_FILE's key, else the store's (PostgreSQL: its
   * `redaction_key` table, one per database), else `<root>/redaction.key`
   */
  redactionKey?: Uint8Array;
  /**
   * Incognito (`create` only): entries and blobs stay in memory, artifacts in a private temp
   * directory removed on close; nothing reaches the store root, the blob directory or a database.
   * Refused with `store`, `readOnly` or `fsync`. @default false
   */
  incognito?: boolean;
  /**
   * Encryption at rest (file store and PostgreSQL): `{ key }` (32 bytes) or `{ keyProvider, keyId }`.
   * New sessions are encrypted line by line (entry row by entry row in PostgreSQL; README, Privacy);
   * opening an encrypted session needs its key (`KEY_REQUIRED`, `DECRYPT_FAILED`). Refused with
   * `incognito`, `rehydrate: "lazy"` and a `store` of another kind.
   */
  encryption?: EncryptionOptions;
}

export interface ResolvedSessionManagerOptions {
  sessionsDir: string;
  blobsDir: string;
  layout: SessionLayout;
  fsync: boolean;
  rehydrate: RehydrateMode;
  deferUntilAssistant: boolean;
  onWarning: WarningHandler;
  readOnly: boolean;
  lockStaleMs: number;
  chunkSize: number;
  cwd: string | undefined;
  now: () => Date;
  prepare: ResolvedPrepareOptions;
  /** The redactor of the `redact` option (its stage runs first among the user stages); null: off. */
  redactor: SecretRedactor | null;
  /** Where the redactor's key comes from (a database backend supplies its own); null: `redact` is off. */
  redactionKey: RedactionKeySlot | null;
  /** The backend given by `store`; null: the file tree. */
  store: StorageBackend | null;
  incognito: boolean;
  /** Null: new sessions are plain (and encrypted ones cannot be opened). */
  encryption: ResolvedEncryption | null;
  /** The options as given, for managers derived from this one (fork, move). */
  original: SessionManagerOptions;
}

/** The clock when no `now` is given: the system's. An append reads `Date.now()` instead of calling it (no `Date` built). */
export const systemNow = (): Date => new Date();

function bool(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw new TranscriptStoreError("INVALID_OPTION", `${name} must be a boolean, got ${String(value)}`);
  return value;
}

/** Validates options once, one message per bad value, and applies defaults. */
export function resolveSessionManagerOptions(options: SessionManagerOptions = {}): ResolvedSessionManagerOptions {
  if (typeof options !== "object" || options === null) throw new TranscriptStoreError("INVALID_OPTION", "options must be an object");
  for (const key of ["root", "sessionsDir", "blobsDir", "cwd"] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== "string" || value.length === 0)) {
      throw new TranscriptStoreError("INVALID_OPTION", `${key} must be a non-empty string`);
    }
  }
  const rehydrate = options.rehydrate ?? "eager";
  if (rehydrate !== "eager" && rehydrate !== "lazy")
    throw new TranscriptStoreError("INVALID_OPTION", `rehydrate must be "eager" or "lazy", got ${String(rehydrate)}`);
  if (options.onWarning !== undefined && typeof options.onWarning !== "function")
    throw new TranscriptStoreError("INVALID_OPTION", "onWarning must be a function");
  if (options.now !== undefined && typeof options.now !== "function")
    throw new TranscriptStoreError("INVALID_OPTION", "now must be a function");
  const lockStaleMs = options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS;
  if (typeof lockStaleMs !== "number" || !(lockStaleMs >= 2000))
    throw new TranscriptStoreError("INVALID_OPTION", "lockStaleMs must be a number >= 2000");
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  if (!Number.isInteger(chunkSize) || chunkSize < 1)
    throw new TranscriptStoreError("INVALID_OPTION", "chunkSize must be a positive integer");
  const incognito = bool("incognito", options.incognito, false);
  if (incognito) refuseWithIncognito(options);
  const dirs = resolveStoreDirs(options);
  const onWarning = options.onWarning ?? (() => {});
  const redactionKey = options.redact === undefined ? null : RedactionKeySlot.resolve(options.redactionKey, rootOf(options));
  const redactor = redactionKey === null ? null : new SecretRedactor(resolveRedactRules(options.redact!), () => redactionKey.get());
  const stages: readonly PrepareStage[] =
    redactor === null ? (options.stages ?? []) : [redactStage(redactor, onWarning), ...(options.stages ?? [])];
  const encryption = resolveEncryption(options.encryption);
  const store = resolveStore(options.store);
  if (encryption !== null) refuseWithEncryption(options, store);
  const prepare = resolvePrepareOptions({ ...options, stages });
  return {
    ...dirs,
    layout: resolveLayout(options.layout, dirs.sessionsDir),
    fsync: bool("fsync", options.fsync, false),
    rehydrate,
    deferUntilAssistant: bool("deferUntilAssistant", options.deferUntilAssistant, false),
    onWarning,
    readOnly: bool("readOnly", options.readOnly, false),
    lockStaleMs,
    chunkSize,
    cwd: options.cwd,
    now: options.now ?? systemNow,
    // An encrypted file session's images go to keyed blobs (keyed-lines.ts); a database's blob table has no keyed
    // blobs, so there they stay inline, sealed with their line. Either way nothing reaches a blob store in clear.
    prepare: encryption !== null && store !== null ? { ...prepare, blobThreshold: Number.MAX_SAFE_INTEGER } : prepare,
    redactor,
    redactionKey,
    store,
    incognito,
    encryption,
    original: options,
  };
}

/** Options that would make an incognito session reach a store, or that mean nothing without one. */
function refuseWithIncognito(options: SessionManagerOptions): void {
  const contradicting = (["store", "readOnly", "fsync", "encryption"] as const).filter(
    (key) => options[key] !== undefined && options[key] !== false,
  );
  if (contradicting.length > 0) {
    throw new TranscriptStoreError("INVALID_OPTION", `incognito cannot be combined with ${contradicting.join(", ")}: nothing is stored`);
  }
}

/** Options encryption cannot honour yet: a backend that does not encrypt, lazy images (refs into encrypted lines). */
function refuseWithEncryption(options: SessionManagerOptions, store: StorageBackend | null): void {
  if (store !== null && !store.supports.encryption) throw unsupported("encryption", "encryption", store.name);
  if (options.rehydrate === "lazy")
    throw new TranscriptStoreError("INVALID_OPTION", 'encryption cannot be combined with rehydrate: "lazy"');
}

/** A given layout (validated), else the one the sessions tree shows, else omp's. */
export function resolveLayout(layout: unknown, sessionsDir: string): SessionLayout {
  if (layout === undefined) return detectLayout(sessionsDir) ?? "omp";
  if (typeof layout !== "string" || !(SESSION_LAYOUTS as readonly string[]).includes(layout)) {
    throw new TranscriptStoreError("INVALID_OPTION", `layout must be "omp" or "pi", got ${String(layout)}`);
  }
  return layout as SessionLayout;
}

/** A backend object as given; a URL is opened by the backend registry (`storage/backends.ts`). */
function resolveStore(store: unknown): StorageBackend | null {
  if (store === undefined) return null;
  if (typeof store === "string") return storeFromUrl(store);
  if (typeof store === "object" && store !== null && typeof (store as StorageBackend).open === "function") return store as StorageBackend;
  throw new TranscriptStoreError("INVALID_OPTION", `store must be a storage backend or a ${storeUrlForms()} URL`);
}

/** The store root the options name. */
export function rootOf(options: SessionManagerOptions): string {
  return options.root !== undefined ? resolve(options.root) : defaultRoot();
}

/** The redaction stage, reporting each entry it changed as SECRET_REDACTED (rule ids and counts only). */
export function redactStage(redactor: SecretRedactor, onWarning: WarningHandler): PrepareStage {
  return redactSecretsStage(redactor, (entry, counts) =>
    onWarning({ code: "SECRET_REDACTED", message: `Entry ${String(entry.id)}: redacted ${describeCounts(counts)}` }),
  );
}

/**
 * The options of a session being created or opened for writing, with the store's privacy settings
 * (`<root>/config.json`, store-settings.ts) applied: `redact: true` turns on write-time redaction
 * (`redact: "secrets"`) unless the caller chose; `encrypt: true` refuses a new session without a key
 * (`KEY_REQUIRED`), never writing one in clear. An incognito session writes nothing: untouched.
 */
export function withStoreSettings(
  options: SessionManagerOptions,
  resolved: ResolvedSessionManagerOptions,
  creating: boolean,
): ResolvedSessionManagerOptions {
  if (resolved.incognito || resolved.readOnly) return resolved;
  const settings = readStoreSettings(rootOf(options));
  if (creating && settings.encrypt && resolved.encryption === null)
    throw new TranscriptStoreError(
      "KEY_REQUIRED",
      `This store encrypts new sessions (encrypt: true in ${settingsPath(rootOf(options))}): pass encryption: { key } (CLI: --key-file)`,
    );
  return settings.redact && options.redact === undefined ? resolveSessionManagerOptions({ ...options, redact: "secrets" }) : resolved;
}
