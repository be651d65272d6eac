/**
 * A process-wide bound on the append descriptors session files keep open: past `limit`, one is
 * closed and its file reopens on its next write (checked to be the same file at the same length).
 * A process can hold many more writable sessions than its fd limit allows.
 *
 * Which one is closed: least-recently-used is the worst choice for the common round-robin over more
 * sessions than the bound (every write reopens), so the victim is the most recently opened handle
 * that was not written to again since ("cold"). A cycle then keeps `limit - 1` of its sessions open
 * and churns one slot, and a handle written again ("hot") stays open. A handle unused while every
 * held session could have been written twice is stale and goes first, oldest first (a new cycle
 * takes over the descriptors of a finished one). Without a cold handle, the least recently used goes.
 */
import { errnoCode } from "../errors.ts";
import { io } from "../io.ts";

/** A file holding an append descriptor that can be closed and reopened on demand. */
export interface EvictableHandle {
  /** Closes the descriptor, keeping what is needed to reopen the same file later. */
  evict(): void;
}

/** Bound used where the process's descriptor limit cannot be read. */
const FALLBACK_LIMIT = 256;
/** Most descriptors kept however high the process's limit is. */
const MAX_LIMIT = 4096;

/**
 * The bound for a process whose soft descriptor limit is `soft`: three quarters of it, at least 64
 * left to the rest of the process (sockets, pipes, blob and quarantine files), capped.
 */
export function limitForDescriptors(soft: number): number {
  if (!Number.isFinite(soft)) return MAX_LIMIT;
  return Math.max(1, Math.min(MAX_LIMIT, soft - Math.max(64, Math.floor(soft / 4))));
}

/** The soft "Max open files" of `/proc/self/limits` text, or null (no such line). */
export function softDescriptorLimit(limitsText: string): number | null {
  const match = /^Max open files\s+(\S+)/m.exec(limitsText);
  if (match === null) return null;
  if (match[1] === "unlimited") return Number.POSITIVE_INFINITY;
  const soft = Number(match[1]);
  return Number.isInteger(soft) && soft > 0 ? soft : null;
}

function defaultLimit(): number {
  try {
    const soft = softDescriptorLimit(io.readFileSync("/proc/self/limits", "utf8") as string);
    return soft === null ? FALLBACK_LIMIT : limitForDescriptors(soft);
  } catch {
    return FALLBACK_LIMIT;
  }
}

/**
 * @internal The most append descriptors kept open at once: learned from the process's descriptor
 * limit where readable, lowered when an open fails with `EMFILE`/`ENFILE` (tests set it).
 */
export const appendHandles = { limit: defaultLimit() };

interface Slot {
  /** Written again since it was (re)opened. */
  hot: boolean;
  /** `clock` at its last touch. */
  used: number;
}

/** Every held handle (open or evicted), until `forgetHandle` (weak: an evicted one is not kept alive here). */
const slots = new WeakMap<EvictableHandle, Slot>();
/** How many handles `slots` holds. */
let held = 0;
/** Open handles; insertion order is recency (a touched handle is deleted and re-added at the end). */
const open = new Set<EvictableHandle>();
/** Handles in the order they were opened, newest last; entries no longer open and cold are skipped. */
let cold: EvictableHandle[] = [];
/** Touches so far: the age of a handle is counted in touches of any handle. */
let clock = 0;

/** The handle touched last: touching it again changes no order (the common one-session case). */
let newest: EvictableHandle | null = null;

function bound(): number {
  return Math.max(1, appendHandles.limit);
}

/** Marks `handle` as just used (opened or written); closes others past the limit. */
export function touchHandle(handle: EvictableHandle): void {
  clock++;
  if (handle === newest && open.size <= bound()) {
    const slot = slots.get(handle)!;
    slot.used = clock;
    slot.hot = true;
    return;
  }
  newest = handle;
  let slot = slots.get(handle);
  if (slot === undefined) {
    slot = { hot: false, used: clock };
    slots.set(handle, slot);
    held++;
  }
  slot.used = clock;
  if (open.has(handle)) {
    slot.hot = true;
    open.delete(handle);
    open.add(handle);
    while (open.size > bound()) if (!evictOne(handle)) break;
    return;
  }
  while (open.size >= bound()) if (!evictOne(handle)) break;
  slot.hot = false;
  open.add(handle);
  cold.push(handle);
  if (cold.length > 2 * open.size + 64) compactCold();
}

/** Closes one open handle other than `keep`: a stale one, else the newest cold one, else the least recently used. */
function evictOne(keep: EvictableHandle | null): boolean {
  const victim = victimFor(keep);
  if (victim !== undefined) close(victim);
  return victim !== undefined;
}

function victimFor(keep: EvictableHandle | null): EvictableHandle | undefined {
  const oldest = open.values().next().value;
  if (oldest !== undefined && oldest !== keep && clock - slots.get(oldest)!.used > 2 * held) return oldest;
  let victim: EvictableHandle | undefined;
  let keptCold = false;
  while (victim === undefined && cold.length > 0) {
    const candidate = cold.pop()!;
    const slot = slots.get(candidate);
    if (candidate === keep) keptCold = true;
    else if (open.has(candidate) && slot?.hot === false) victim = candidate;
  }
  // `keep` stays a candidate for later evictions while it is cold.
  if (keptCold) cold.push(keep!);
  if (victim !== undefined) return victim;
  for (const h of open) if (h !== keep) return h;
  return undefined;
}

function close(handle: EvictableHandle): void {
  open.delete(handle);
  if (handle === newest) newest = null;
  handle.evict();
}

/** Drops skipped entries from `cold` (each open cold handle kept once, at its latest place). */
function compactCold(): void {
  const seen = new Set<EvictableHandle>();
  const kept: EvictableHandle[] = [];
  for (let i = cold.length - 1; i >= 0; i--) {
    const h = cold[i]!;
    const slot = slots.get(h);
    if (seen.has(h) || slot === undefined || !open.has(h) || slot.hot) continue;
    seen.add(h);
    kept.push(h);
  }
  cold = kept.reverse();
}

/** `handle` closed its descriptor itself and is no longer held. */
export function forgetHandle(handle: EvictableHandle): void {
  if (handle === newest) newest = null;
  open.delete(handle);
  if (slots.delete(handle)) held--;
}

/** True for the errors of an open that ran out of descriptors (the process's or the system's). */
export function isDescriptorExhaustion(err: unknown): boolean {
  const code = errnoCode(err);
  return code === "EMFILE" || code === "ENFILE";
}

/**
 * An open failed for want of descriptors: lowers the bound below what is open now and closes
 * handles (never `keep`) to make room. False when there was none to give back.
 */
export function relieveDescriptorPressure(keep: EvictableHandle | null = null): boolean {
  const others = open.size - (keep !== null && open.has(keep) ? 1 : 0);
  if (others === 0) return false;
  appendHandles.limit = Math.max(1, Math.floor((open.size * 3) / 4));
  while (evictOne(keep) && open.size >= bound()) {
    // closes one more while the open ones and the one being opened exceed the bound
  }
  return true;
}

/**
 * Runs `openFile` (an open of any file); when it fails for want of descriptors while append
 * descriptors are open, gives some back (`relieveDescriptorPressure`) and tries again.
 */
export function openWithRelief<T>(openFile: () => T, keep: EvictableHandle | null = null): T {
  for (;;) {
    try {
      return openFile();
    } catch (err) {
      if (!isDescriptorExhaustion(err) || !relieveDescriptorPressure(keep)) throw err;
    }
  }
}

/** @internal How many append descriptors are open. */
export function openHandleCount(): number {
  return open.size;
}
