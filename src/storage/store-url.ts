import { TranscriptStoreError } from "../errors.ts";
import { factoryFor, type StoreConnectOptions, storeUrlForms } from "./backend-registry.ts";
import { redactUrl } from "./redact-url.ts";
import type { StorageBackend } from "./session-storage.ts";

export { redactUrl };

/** One backend per URL in a process: every manager given the same URL shares its connections. */
const byUrl = new Map<string, StorageBackend>();

/** True when a registered backend opens `url` (its scheme is known). */
export function isStoreUrl(url: string): boolean {
  return factoryFor(url) !== null;
}

/**
 * The backend a `store` URL names (its scheme picks the registered backend). `options` (the
 * CLI's: a read-only command's `migrate: "check"`, a `schema`) make a backend of their own for that URL.
 */
export function storeFromUrl(url: string, options: StoreConnectOptions = {}): StorageBackend {
  const key = options.migrate === undefined && options.schema === undefined ? url : `${JSON.stringify(options)} ${url}`;
  const known = byUrl.get(key);
  if (known !== undefined) return known;
  const factory = factoryFor(url);
  if (factory === null) {
    throw new TranscriptStoreError(
      "INVALID_OPTION",
      `store URL must start with ${storeUrlForms()} (got ${JSON.stringify(redactUrl(url))})`,
    );
  }
  const backend = factory.open(url, options);
  byUrl.set(key, backend);
  return backend;
}

/** Ends the connections of every backend opened from a URL (for tests and short-lived tools). */
export async function closeUrlStores(): Promise<void> {
  const backends = [...byUrl.values()];
  byUrl.clear();
  for (const backend of backends) await backend.close?.();
}
