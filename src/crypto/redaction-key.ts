import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { ensureDir } from "../io.ts";
import { writeNew } from "../io-exclusive.ts";

/** The file under the store root holding the store's redaction key (64 hex digits). */
export const REDACTION_KEY_FILE = "redaction.key";

const KEY_TEXT = /^[0-9a-f]{64}\n?$/;

/**
 * The store's redaction key: read from `<root>/redaction.key`, else created there (32 random
 * bytes, mode 0600, its root 0700). Creation is exclusive (`writeNew`): the key is written to a
 * temp file and linked to its name, so two processes racing both end with the one key that won, and nobody reads a half-written
 * key. A key file that is not 64 hex digits is an `INVALID_CONFIG` error (never replaced).
 */
export function loadRedactionKey(root: string): Uint8Array {
  const path = join(root, REDACTION_KEY_FILE);
  const existing = readKey(path);
  if (existing !== null) return existing;
  // the store's creators: the root 0700, the key 0600 (written whole, never replacing one that won a race)
  ensureDir(root, true);
  writeNew(path, Buffer.from(`${randomBytes(32).toString("hex")}\n`), { fsync: true });
  const key = readKey(path);
  if (key === null)
    throw new TranscriptStoreError("PERSISTENCE_FAILED", `The redaction key ${path} vanished after it was created`, { path });
  return key;
}

/** The store's redaction key when it has one (null: none yet); never creates it. */
export function readRedactionKey(root: string): Uint8Array | null {
  return readKey(join(root, REDACTION_KEY_FILE));
}

function readKey(path: string): Uint8Array | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw err;
  }
  if (!KEY_TEXT.test(text)) {
    throw new TranscriptStoreError("INVALID_CONFIG", `The redaction key ${path} is not 64 hex digits; restore it or remove it`, { path });
  }
  return Buffer.from(text.slice(0, 64), "hex");
}

/** A key getter that reads (or creates) the key on its first call and keeps it. */
export function lazyRedactionKey(root: string): () => Uint8Array {
  let key: Uint8Array | undefined;
  return () => (key ??= loadRedactionKey(root));
}
