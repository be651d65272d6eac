import { join } from "node:path";
import { writeFileAtomic } from "../io.ts";
import { SEALED_ARTIFACT_MAGIC, type ArtifactCipher } from "./artifact-cipher.ts";
import { listEntries, readGuarded } from "./artifact-files.ts";

/** True for the files an encrypted session seals: content (`.log`) and agent outputs (`.md`); metadata stays clear. */
const isSealedKind = (name: string) => name.endsWith(".log") || name.endsWith(".md");

/**
 * The stored bytes of the sealed file `name` opened under `from` and sealed under `to` (a rekey, or
 * a fork: another session id); null for a file that is not sealed content (metadata, or written in
 * clear). A file that does not open under `from` is `DECRYPT_FAILED`.
 */
export function resealContent(name: string, bytes: Buffer, from: ArtifactCipher, to: ArtifactCipher): Buffer | null {
  if (!isSealedKind(name) || !bytes.subarray(0, SEALED_ARTIFACT_MAGIC.length).equals(SEALED_ARTIFACT_MAGIC)) return null;
  return to.seal(name, from.open(name, bytes));
}

/**
 * A fork's copy of an encrypted session's artifacts directory, sealed again for the fork: each
 * sealed file (content `.log`, agent output `.md`) is opened under the source's cipher and written
 * (temp + rename, so a hard-linked copy never touches the source's file) under the fork's. A file
 * that does not authenticate is left as it is (reads of it stay `DECRYPT_FAILED`); returns how many
 * files were sealed again.
 */
export function resealArtifacts(dir: string, from: ArtifactCipher, to: ArtifactCipher, fsync: boolean): number {
  let count = 0;
  for (const entry of listEntries(dir)) {
    if (!entry.isFile() || !(entry.name.endsWith(".log") || entry.name.endsWith(".md"))) continue;
    const path = join(dir, entry.name);
    const bytes = readGuarded(path);
    if (bytes === null || bytes === "unsafe" || !bytes.subarray(0, SEALED_ARTIFACT_MAGIC.length).equals(SEALED_ARTIFACT_MAGIC)) continue;
    let plain: Buffer;
    try {
      plain = from.open(entry.name, bytes, path);
    } catch {
      continue;
    }
    writeFileAtomic(path, to.seal(entry.name, plain), { fsync });
    count++;
  }
  return count;
}

/**
 * Checks that every sealed file of an artifacts directory opens under `from` (or, left by a rekey
 * that was interrupted, already under `to`), and returns the step that seals them under `to`
 * (temp + rename each). A file that opens under neither is `DECRYPT_FAILED` before anything is
 * written. The step reads each file again: memory holds one file at a time.
 */
export function planRekeyArtifacts(
  dir: string,
  from: ArtifactCipher,
  to: ArtifactCipher,
  fsync: boolean,
): { files: number; commit: () => void } {
  const pending: string[] = [];
  for (const entry of listEntries(dir)) {
    if (!entry.isFile() || !(entry.name.endsWith(".log") || entry.name.endsWith(".md"))) continue;
    const path = join(dir, entry.name);
    const bytes = readGuarded(path);
    if (bytes === null || bytes === "unsafe" || !bytes.subarray(0, SEALED_ARTIFACT_MAGIC.length).equals(SEALED_ARTIFACT_MAGIC)) continue;
    try {
      from.open(entry.name, bytes, path);
      pending.push(entry.name);
    } catch (err) {
      try {
        to.open(entry.name, bytes, path);
      } catch {
        throw err;
      }
    }
  }
  return {
    files: pending.length,
    commit: () => {
      for (const name of pending) {
        const path = join(dir, name);
        const bytes = readGuarded(path);
        if (bytes === null || bytes === "unsafe") continue;
        writeFileAtomic(path, to.seal(name, from.open(name, bytes, path)), { fsync });
      }
    },
  };
}
