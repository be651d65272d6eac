import assert from "node:assert/strict";
import type { SessionEntry } from "../format/types.ts";
import type { SessionManagerOptions } from "../session/session-options.ts";
import type { SessionManager } from "../session/session-manager.ts";

/**
 * The test framework the suite registers its tests with: any runner with a `test(name, fn)` (and,
 * optionally, `describe(name, fn)` to group them) whose `fn` may return a promise: node:test,
 * vitest, jest, mocha (`it`), … The suite asserts with node:assert, so a failure is an
 * `AssertionError` (or the library's `TranscriptStoreError`) thrown from `fn`.
 */
export interface ConformanceFramework {
  test: (name: string, fn: () => Promise<void>) => unknown;
  describe?: (name: string, fn: () => void) => unknown;
}

/** The backend under test. */
export interface ConformanceBackend {
  /** Shown in the group names (`session manager [<name>]`). */
  name: string;
  /**
   * Options naming a fresh, empty store, called once per test: `store` (your `StorageBackend`;
   * absent: the built-in file tree under `root`) and `root`, a fresh empty directory. A backend
   * given as `store` must write nothing under `root` (the suite checks). Close what it opened in
   * your framework's after-each hook.
   */
  options(): Promise<SessionManagerOptions & { root: string }>;
  /**
   * True when sessions live in files (`sessionFile` is the path, `location` the same); false when
   * they do not (a database: `sessionFile` null, `location` `<database>#<id>`).
   */
  sessionFiles: boolean;
}

/** What each behaviour file registers its tests with. */
export type Register = (name: string, fn: () => Promise<void>) => void;

export const user = (text: string) => ({ role: "user", content: text, timestamp: 1 });
export const assistant = (text: string) => ({ role: "assistant", content: [{ type: "text", text }], timestamp: 2 });
export const withImage = (png: Buffer) => ({
  role: "user",
  content: [
    { type: "text", text: "look" },
    { type: "image", data: png.toString("base64"), mimeType: "image/png" },
  ],
  timestamp: 3,
});

/** Where a session can be opened again: its file, or its id in a database. */
export const refOf = (m: SessionManager): string => m.sessionFile ?? m.sessionId;

/** Each entry's id, parent and type: the shape of the tree. */
export const ids = (entries: SessionEntry[]) => entries.map((e) => [e.id, e.parentId, e.type]);

/** Asserts that `promise` rejects with an error whose `code` is `code`. */
export async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.equal((err as { code?: unknown }).code, code, `expected ${code}: ${(err as Error)?.message}`);
    return true;
  });
}

/** Asserts that `fn` throws an error whose `code` is `code`. */
export function throwsWithCode(fn: () => unknown, code: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.equal((err as { code?: unknown }).code, code, `expected ${code}: ${(err as Error)?.message}`);
    return true;
  });
}
