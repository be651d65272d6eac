/**
 * A process-wide bound on the append descriptors session files keep open: past `limit`, the least
 * recently used one is closed and its file reopens on its next write (checked to be the same file
 * at the same length). A process can hold many more writable sessions than its fd limit allows.
 */

/** A file holding an append descriptor that can be closed and reopened on demand. */
export interface EvictableHandle {
  /** Closes the descriptor, keeping what is needed to reopen the same file later. */
  evict(): void;
}

/** @internal The most append descriptors kept open at once (tests lower it). */
export const appendHandles = { limit: 256 };

// Insertion order is recency: a touched handle is deleted and re-added at the end.
const open = new Set<EvictableHandle>();

/** The handle touched last: touching it again changes no order (the common one-session case). */
let newest: EvictableHandle | null = null;

/** Marks `handle` as just used (opened or written); evicts the least recently used past the limit. */
export function touchHandle(handle: EvictableHandle): void {
  if (handle === newest && open.size <= Math.max(1, appendHandles.limit)) return;
  newest = handle;
  open.delete(handle);
  open.add(handle);
  while (open.size > Math.max(1, appendHandles.limit)) {
    const oldest = open.values().next().value!;
    open.delete(oldest);
    oldest.evict();
  }
}

/** `handle` closed its descriptor itself. */
export function forgetHandle(handle: EvictableHandle): void {
  if (handle === newest) newest = null;
  open.delete(handle);
}

/** @internal How many append descriptors are open. */
export function openHandleCount(): number {
  return open.size;
}
