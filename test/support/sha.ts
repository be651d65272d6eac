import { createHash } from "node:crypto";

/** The sha256 of `bytes` (a string is hashed as UTF-8) as 64 lowercase hex digits: a blob's name. */
export function sha(bytes: Buffer | Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}
