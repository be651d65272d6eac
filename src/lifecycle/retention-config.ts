import { join, resolve } from "node:path";
import { errnoCode, TranscriptStoreError } from "../errors.ts";
import { io } from "../io.ts";

/** Days a removed session stays in the trash before `purge` (no ids) deletes it. @default 30 */
export const DEFAULT_TRASH_RETAIN_DAYS = 30;

/** The env var naming a retention config file instead of `<root>/config.json`. */
export const RETENTION_ENV = "TRANSCRIPT_STORE_RETENTION";

/** A prune policy: which sessions `prune` moves to the trash (none of the rules set: nothing). */
export interface PrunePolicy {
  /** Sessions last active longer ago than this (ms). */
  olderThanMs?: number;
  /** Past this total (bytes of every listed session), the oldest go until the total fits. */
  maxTotalBytes?: number;
  /** The newest N sessions of each cwd are always kept. */
  keepLast?: number;
}

/** The store's retention config, defaults applied. */
export interface RetentionConfig {
  trash: { retainDays: number };
  prune: PrunePolicy;
  /** The store-wide encryption policy (session/encryption-policy.ts): `require` refuses plain sessions. */
  encryption?: { require: boolean };
  /** The file it was read from, or null (none: defaults). */
  source: string | null;
}

const UNITS_MS: Record<string, number> = { ms: 1, s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 7 * 86400e3 };
const UNITS_BYTES: Record<string, number> = { "": 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** `30d`, `12h`, `90m`, `2w`, `45s`, `500ms` → ms; null when not a duration. */
export function parseAge(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)$/.exec(text.trim());
  return m === null ? null : Number(m[1]) * UNITS_MS[m[2]!]!;
}

/** `10G`, `10GB`, `10GiB`, `500M`, `4096` → bytes (binary units); null when not a size. */
export function parseSize(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?$/i.exec(text.trim());
  if (m === null) return null;
  const unit = m[2]!.toLowerCase();
  if (unit === "" && m[3] !== undefined && m[3].toLowerCase() !== "b") return null;
  return Math.floor(Number(m[1]) * UNITS_BYTES[unit]!);
}

/** Where the retention config of the store at `root` is read from: `$TRANSCRIPT_STORE_RETENTION`, else `<root>/config.json`. */
export function retentionConfigPath(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const given = env[RETENTION_ENV];
  return given !== undefined && given !== "" ? resolve(given) : join(root, "config.json");
}

function invalid(path: string, what: string): TranscriptStoreError {
  return new TranscriptStoreError("INVALID_CONFIG", `${path}: ${what}`, { path });
}

/**
 * Reads and validates the retention config (absent file: the defaults). Any unknown key, wrong
 * type or bad value is refused with `INVALID_CONFIG` naming it: a typo must not silently turn a
 * policy off.
 */
export function loadRetentionConfig(root: string, env: NodeJS.ProcessEnv = process.env): RetentionConfig {
  const path = retentionConfigPath(root, env);
  let text: string;
  try {
    text = io.readFileSync(path, "utf8") as string;
  } catch (err) {
    // The env var names a file on purpose: its absence is an error, the default file's is not.
    if (errnoCode(err) === "ENOENT" && env[RETENTION_ENV] === undefined)
      return { trash: { retainDays: DEFAULT_TRASH_RETAIN_DAYS }, prune: {}, source: null };
    throw invalid(path, `cannot read the retention config: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalid(path, `not JSON: ${(err as Error).message}`);
  }
  return { ...validateRetentionConfig(value, path), source: path };
}

/** Validates a parsed config object (`where` names it in messages). */
export function validateRetentionConfig(value: unknown, where = "retention config"): Omit<RetentionConfig, "source"> {
  const obj = (v: unknown, name: string, keys: string[]): Record<string, unknown> => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw invalid(where, `${name} must be an object`);
    for (const key of Object.keys(v))
      if (!keys.includes(key)) throw invalid(where, `unknown key ${name}.${key} (known: ${keys.join(", ")})`);
    return v as Record<string, unknown>;
  };
  // encrypt and redact are the store's privacy settings (session/store-settings.ts reads them).
  const top = obj(value, "config", ["trash", "prune", "encrypt", "redact", "encryption"]);
  // the store-wide encryption policy (session/encryption-policy.ts reads it)
  let encryption: { require: boolean } | undefined;
  if (top.encryption !== undefined) {
    const enc = obj(top.encryption, "encryption", ["require"]);
    if (enc.require !== undefined && typeof enc.require !== "boolean")
      throw invalid(where, `encryption.require must be a boolean, got ${JSON.stringify(enc.require)}`);
    encryption = { require: enc.require === true };
  }
  const trash = top.trash === undefined ? {} : obj(top.trash, "trash", ["retainDays"]);
  const retainDays = trash.retainDays ?? DEFAULT_TRASH_RETAIN_DAYS;
  if (typeof retainDays !== "number" || !Number.isFinite(retainDays) || retainDays < 0)
    throw invalid(where, `trash.retainDays must be a number of days ≥ 0, got ${JSON.stringify(retainDays)}`);
  const prune = top.prune === undefined ? {} : obj(top.prune, "prune", ["olderThan", "maxTotal", "keepLast"]);
  const policy: PrunePolicy = {};
  if (prune.olderThan !== undefined) {
    const ms = typeof prune.olderThan === "string" ? parseAge(prune.olderThan) : null;
    if (ms === null) throw invalid(where, `prune.olderThan must be a duration such as "30d", got ${JSON.stringify(prune.olderThan)}`);
    policy.olderThanMs = ms;
  }
  if (prune.maxTotal !== undefined) {
    const bytes =
      typeof prune.maxTotal === "string" ? parseSize(prune.maxTotal) : typeof prune.maxTotal === "number" ? prune.maxTotal : null;
    if (bytes === null || !Number.isFinite(bytes) || bytes < 0)
      throw invalid(where, `prune.maxTotal must be a size such as "10G" or a number of bytes, got ${JSON.stringify(prune.maxTotal)}`);
    policy.maxTotalBytes = bytes;
  }
  if (prune.keepLast !== undefined) {
    if (!Number.isInteger(prune.keepLast) || (prune.keepLast as number) < 0)
      throw invalid(where, `prune.keepLast must be an integer ≥ 0, got ${JSON.stringify(prune.keepLast)}`);
    policy.keepLast = prune.keepLast as number;
  }
  return { trash: { retainDays }, prune: policy, ...(encryption === undefined ? {} : { encryption }) };
}
