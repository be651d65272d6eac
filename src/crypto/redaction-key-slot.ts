import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { lazyRedactionKey } from "./redaction-key.ts";

/** The environment variable naming a key file (64 hex digits) shared by several stores: their markers agree. */
export const REDACTION_KEY_FILE_ENV = "TRANSCRIPT_STORE_REDACTION_KEY_FILE";

const KEY_TEXT = /^[0-9a-f]{64}\n?$/;

/** The key a key file holds (64 hex digits, as `<root>/redaction.key`); absent or malformed: `INVALID_CONFIG`. */
export function readRedactionKeyFile(path: string): Uint8Array {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new TranscriptStoreError("INVALID_CONFIG", `The redaction key file ${path} cannot be read (${errnoCode(err) ?? String(err)})`, {
      path,
      cause: err,
    });
  }
  if (!KEY_TEXT.test(text))
    throw new TranscriptStoreError("INVALID_CONFIG", `The redaction key file ${path} is not 64 hex digits`, { path });
  return Buffer.from(text.slice(0, 64), "hex");
}

/**
 * Where the redaction markers' key comes from, in this order: a key given (`redactionKey`), the key
 * file `$TRANSCRIPT_STORE_REDACTION_KEY_FILE` names, the store's own key (a database's table, loaded
 * by its backend before the first append: `fromStore`), else `<root>/redaction.key` (read or created
 * on the first secret). The redactor asks synchronously (`get`) and only when it found a secret.
 */
export class RedactionKeySlot {
  private key: Uint8Array | null;

  private constructor(
    key: Uint8Array | null,
    /** A key given or named explicitly: a store's own key does not replace it. */
    readonly explicit: boolean,
    private readonly fallback: () => Uint8Array,
  ) {
    this.key = key;
  }

  /** The slot `redactionKey` and the environment ask for, falling back to the store root's key. */
  static resolve(given: unknown, root: string, env: NodeJS.ProcessEnv = process.env): RedactionKeySlot {
    if (given !== undefined) {
      if (!(given instanceof Uint8Array) || given.length !== 32)
        throw new TranscriptStoreError("INVALID_OPTION", "redactionKey must be 32 bytes (a Uint8Array or Buffer)");
      return new RedactionKeySlot(Buffer.from(given), true, () => given);
    }
    const file = env[REDACTION_KEY_FILE_ENV];
    if (file !== undefined && file.length > 0) {
      const path = resolve(file);
      return new RedactionKeySlot(null, true, () => readRedactionKeyFile(path));
    }
    return new RedactionKeySlot(null, false, lazyRedactionKey(root));
  }

  /** A store's own key (a database's): taken unless a key was given explicitly or one is in use already. */
  fromStore(key: Uint8Array): void {
    if (!this.explicit && this.key === null) this.key = key;
  }

  /** Whether a store should supply its key (none given explicitly, none in use yet). */
  get wantsStoreKey(): boolean {
    return !this.explicit && this.key === null;
  }

  /** The key (read or created on first need). */
  get(): Uint8Array {
    if (this.key === null) this.key = this.fallback();
    return this.key;
  }
}
