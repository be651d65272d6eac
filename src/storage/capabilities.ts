import { TranscriptStoreError } from "../errors.ts";

/**
 * What a backend may support beyond the seam's required part (docs/architecture.md, "Capabilities").
 * A service over the seam asks `supports`, never which backend it was given.
 */
export const CAPABILITIES = [
  /** Pins, archive, trash, purge and prune (`lifecycle()`). */
  "lifecycle",
  /** A search index of its own (`index()`). */
  "index",
  /** `du`, `usage` and the usage ledger of deleted sessions (`accounting()`). */
  "accounting",
  /** Damaged lines kept aside (a quarantine) and served by export. */
  "quarantine",
  /** Encrypted sessions (`encryption: { key }`). */
  "encryption",
  /** `stats`, `verify`, `redact --store`, `rekey --store` over the whole store (`maintenance()`). */
  "maintenance",
  /** A fork of a whole session made without reading its entries (`forkWhole()`). */
  "wholeSessionFork",
  /** A session is a file on disk: its path is a ref, and readers may open the file itself. */
  "sessionFiles",
] as const;

/** One capability a backend may declare. */
export type Capability = (typeof CAPABILITIES)[number];

/** A backend's manifest: for each capability, whether it supports it. */
export type Supports = Readonly<Record<Capability, boolean>>;

/** What each capability is called in a refusal (`this store does not support <what>`). */
const NAMES: Record<Capability, string> = {
  lifecycle: "pins, archive and trash",
  index: "a search index",
  accounting: "du and usage",
  quarantine: "quarantine",
  encryption: "encryption",
  maintenance: "store maintenance",
  wholeSessionFork: "whole-session forks",
  sessionFiles: "session files",
};

/** A manifest: every capability false, then those named true. */
export function supporting(...capabilities: Capability[]): Supports {
  const out = Object.fromEntries(CAPABILITIES.map((c) => [c, capabilities.includes(c)])) as Record<Capability, boolean>;
  return Object.freeze(out);
}

/** The refusal of a capability a store lacks (`NOT_SUPPORTED`): `this store does not support stats`. */
export function unsupported(capability: Capability, what: string = NAMES[capability], name?: string): TranscriptStoreError {
  const store = name === undefined ? "this store" : `this store (${name})`;
  return new TranscriptStoreError("NOT_SUPPORTED", `${store} does not support ${what}`);
}

/** Throws `NOT_SUPPORTED` unless `backend` declares `capability`. */
export function requireCapability(
  backend: { readonly supports: Supports; readonly name?: string },
  capability: Capability,
  what?: string,
): void {
  if (!backend.supports[capability]) throw unsupported(capability, what, backend.name);
}
