import { TranscriptStoreError } from "../errors.ts";
import { PostgresBackend } from "./postgres/pg-backend.ts";
import type { PgStoreOptions } from "../database/index.ts";
import type { StorageBackend } from "./session-storage.ts";

/** One backend per URL in a process: every manager given the same URL shares its connections. */
const byUrl = new Map<string, StorageBackend>();

/**
 * The backend a `store` URL names (`postgres://` or `postgresql://`). `options` (the CLI's: a
 * read-only command's `migrate: "check"`, a `schema`) make a backend of their own for that URL.
 */
export function storeFromUrl(url: string, options: Pick<PgStoreOptions, "migrate" | "schema"> = {}): StorageBackend {
  const key = options.migrate === undefined && options.schema === undefined ? url : `${JSON.stringify(options)} ${url}`;
  const known = byUrl.get(key);
  if (known !== undefined) return known;
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new TranscriptStoreError("INVALID_OPTION", `store URL must start with postgres:// (got ${JSON.stringify(redactUrl(url))})`);
  }
  const backend = PostgresBackend.of(url, options);
  byUrl.set(key, backend);
  return backend;
}

/** A URL without its password, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@]*@/i, "$1:***@");
}

/** Ends the connections of every backend opened from a URL (for tests and short-lived tools). */
export async function closeUrlStores(): Promise<void> {
  const backends = [...byUrl.values()];
  byUrl.clear();
  for (const backend of backends) if (backend instanceof PostgresBackend) await backend.close();
}
