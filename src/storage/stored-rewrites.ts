import { requireCapability } from "./capabilities.ts";
import type { StorageBackend } from "./session-storage.ts";
import type { MaintenanceDriver } from "./store-drivers.ts";

/**
 * What a store offers `rekey --store` and `redact --store`: whole-session rewrites in one transaction
 * under the session's lease, and the store's own redaction key (its `maintenance()` driver).
 */
export type StoredRewrites = MaintenanceDriver;

/**
 * The maintenance driver of the store given, or null when none is (the file tree: the command's
 * usage). A store that does not declare `maintenance` is refused: `NOT_SUPPORTED`, naming `what`.
 */
export function storedRewritesOf(store: StorageBackend | null, what = "store maintenance"): MaintenanceDriver | null {
  if (store === null) return null;
  requireCapability(store, "maintenance", what);
  return store.maintenance!();
}
