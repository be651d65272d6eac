import { join, resolve } from "node:path";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { io, writeFileAtomic } from "../io.ts";
import { isRecord } from "../format/types.ts";

/**
 * The store-wide privacy settings of `<root>/config.json` (the file the retention config lives in):
 * `encrypt` (new sessions are encrypted: one made without a key is refused, `KEY_REQUIRED`) and
 * `redact` (secrets are redacted as entries are written, as the `redact` option does). Both false
 * when the file or the key is absent.
 */
export interface StoreSettings {
  encrypt: boolean;
  redact: boolean;
  /** `{"encryption": {"require": true}}`: a plain session of the store is refused on open (`NOT_ENCRYPTED`). */
  requireEncryption: boolean;
}

/** The keys of config.json this module owns (the retention config accepts them beside its own). */
export const SETTING_KEYS = ["encrypt", "redact"] as const;

/** `<root>/config.json`. */
export function settingsPath(root: string): string {
  return join(resolve(root), "config.json");
}

function readConfig(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = io.readFileSync(path, "utf8") as string;
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return {};
    throw new TranscriptStoreError("INVALID_CONFIG", `${path}: cannot read the store config: ${(err as Error).message}`, { path });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new TranscriptStoreError("INVALID_CONFIG", `${path}: not JSON: ${(err as Error).message}`, { path });
  }
  if (!isRecord(value)) throw new TranscriptStoreError("INVALID_CONFIG", `${path}: the store config must be an object`, { path });
  return value;
}

/** The settings of the store at `root`; a key that is not a boolean is `INVALID_CONFIG`. */
export function readStoreSettings(root: string): StoreSettings {
  const path = settingsPath(root);
  const config = readConfig(path);
  const flag = (name: (typeof SETTING_KEYS)[number]) => {
    const value = config[name] ?? false;
    if (typeof value !== "boolean")
      throw new TranscriptStoreError("INVALID_CONFIG", `${path}: ${name} must be true or false, got ${JSON.stringify(value)}`, { path });
    return value;
  };
  const encryption = config.encryption ?? {};
  if (!isRecord(encryption) || (encryption.require !== undefined && typeof encryption.require !== "boolean"))
    throw new TranscriptStoreError("INVALID_CONFIG", `${path}: encryption must be {"require": true|false}`, { path });
  return { encrypt: flag("encrypt"), redact: flag("redact"), requireEncryption: encryption.require === true };
}

/** Sets one setting in `<root>/config.json`, every other key kept (temp + rename). */
export function writeStoreSetting(root: string, name: (typeof SETTING_KEYS)[number], value: boolean): void {
  const path = settingsPath(root);
  const config = readConfig(path);
  config[name] = value;
  io.mkdirSync(resolve(root), { recursive: true });
  writeFileAtomic(path, Buffer.from(`${JSON.stringify(config, null, 2)}\n`), { fsync: true });
}
