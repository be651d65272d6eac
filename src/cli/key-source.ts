import { resolve } from "node:path";
import { TranscriptStoreError } from "../errors.ts";
import { io } from "../io.ts";
import { keyIdOf, type StoreKey } from "../crypto/line-cipher.ts";
import { terminalText } from "./terminal-text.ts";

/** The env var naming the store key's file when `--key-file` is not given. Never the key itself. */
export const KEY_FILE_ENV = "TRANSCRIPT_STORE_KEY_FILE";

/**
 * A key file: 32 raw bytes, or 64 hex characters (a trailing newline allowed). Anything else is
 * `INVALID_OPTION`; a file others may read is used with a warning (`warn`), as ssh warns of a key.
 */
export function readKeyFile(cwd: string, file: string, option: string, warn?: (text: string) => void): StoreKey {
  const path = resolve(cwd, file);
  let bytes: Buffer;
  try {
    bytes = io.readFileSync(path);
  } catch (err) {
    throw new TranscriptStoreError("KEY_REQUIRED", `${option} ${file}: cannot read the key file: ${(err as Error).message}`, { path });
  }
  const text = bytes.toString("latin1").trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, "hex") : bytes;
  if (key.length !== 32)
    throw new TranscriptStoreError("INVALID_OPTION", `${option} ${file}: a key file holds 32 bytes or 64 hex characters`, { path });
  const mode = io.statSync(path).mode;
  if (warn !== undefined && (mode & 0o077) !== 0)
    warn(terminalText`warning: key file ${file} can be read by others (mode ${(mode & 0o777).toString(8)}); chmod 600 it\n`);
  return { key, keyId: keyIdOf(key) };
}

/**
 * The store key of a CLI run: `--key-file <path>`, else the file `$TRANSCRIPT_STORE_KEY_FILE`
 * names; null when neither is given. A key is never taken on the command line itself.
 */
export function keySourceOf(given: unknown, env: NodeJS.ProcessEnv, cwd: string, warn: (text: string) => void): StoreKey | null {
  if (typeof given === "string") return readKeyFile(cwd, given, "--key-file", warn);
  const named = env[KEY_FILE_ENV];
  return named === undefined || named === "" ? null : readKeyFile(cwd, named, `$${KEY_FILE_ENV}`, warn);
}
