import { createReadStream } from "node:fs";
import { tmpdir } from "node:os";
import { dirname } from "node:path";
import type { Readable } from "node:stream";
import { TranscriptStoreError } from "../errors.ts";
import { isRecord, type SessionHeader } from "../format/types.ts";
import { io } from "../io.ts";
import {
  resolveSessionManagerOptions,
  type ResolvedSessionManagerOptions,
  type SessionManagerOptions,
} from "../session/session-options.ts";
import { backendOf } from "../storage/backends.ts";
import { relateSessionStreams, type SessionRelation } from "../storage/session-relation.ts";
import {
  hashesOfLines,
  importConflict,
  type ImportStatus,
  type SessionSnapshot,
  type SnapshotArtifact,
} from "../storage/session-snapshot.ts";
import { artifactMember, blobMember, headerMember, linesMember, type ManifestSession, quarantineMember } from "./bundle-manifest.ts";
import { spoolBundle, spooledLines, type SpooledBundle } from "./bundle-spool.ts";
import { fileBytes } from "../storage/session-file-lines.ts";
import { type CwdMapping, mapCwd, parseCwdMap } from "./cwd-map.ts";

export interface UnbundleOptions extends SessionManagerOptions {
  /**
   * Remaps each session's header cwd (and so where it lives): `old=new` texts or mappings; the
   * longest `old` that is the cwd or a parent of it wins. @default none
   */
  cwdMap?: ReadonlyArray<string | CwdMapping>;
  /** Verify the bundle and report what would happen; write nothing. @default false */
  dryRun?: boolean;
  /**
   * Where the bundle is spooled while it is checked (removed after). @default the store root (the
   * sessions directory's parent) when it exists, else the OS temp directory
   */
  tempDir?: string;
}

export interface UnbundledSession {
  id: string;
  /** `created`, `unchanged` (the store held it, or more), `appended` (the store held its beginning). With `dryRun`: what would be. */
  status: ImportStatus;
  /** Where it lives (null with `dryRun` for a session not yet in the store). */
  location: string | null;
  /** Its cwd in the store (after `cwdMap`). */
  cwd: string;
  lines: number;
  artifacts: number;
}

export interface UnbundleReport {
  sessions: UnbundledSession[];
  /** Blobs the bundle carried. */
  blobs: number;
  /** Blobs the sessions reference that the bundle could not carry (their source lacked them). */
  missingBlobs: string[];
  /** The bundle's text was redacted for sharing when it was made (its manifest says so). */
  redacted: boolean;
  dryRun: boolean;
}

async function* none<T>(): AsyncIterable<T> {}

/** The session `session` of the spooled bundle as a snapshot, its header's cwd remapped. */
function snapshotOf(spool: SpooledBundle, session: ManifestSession, mappings: readonly CwdMapping[]): SessionSnapshot {
  const at = (name: string) => spool.pathOf(name)!;
  const stored = io.readFileSync(at(headerMember(session.dir)), "utf8").slice(0, -1);
  const header = JSON.parse(stored) as SessionHeader;
  const cwd = typeof header.cwd === "string" ? mapCwd(header.cwd, mappings) : header.cwd;
  // The header line stays byte for byte unless its cwd changes (then it is written anew, keys in order).
  const mapped = cwd === header.cwd ? null : { ...header, cwd };
  const artifacts = spool.manifest.members.filter((m) => m.name.startsWith(artifactMember(session.dir, "")));
  const lines = () => spooledLines(at(linesMember(session.dir)));
  return {
    header: mapped ?? header,
    headerLine: mapped === null ? stored : JSON.stringify(mapped),
    lines,
    quarantine: session.quarantine === 0 ? none : () => spooledLines(at(quarantineMember(session.dir))),
    artifacts: async function* (): AsyncIterable<SnapshotArtifact> {
      const prefix = artifactMember(session.dir, "");
      for (const m of artifacts) yield { name: m.name.slice(prefix.length), ...fileBytes(at(m.name), m.size) };
    },
    blobHashes: () => hashesOfLines(lines()),
    blob: async (hash) => {
      const path = spool.pathOf(blobMember(hash));
      return path === null ? null : fileBytes(path);
    },
  };
}

async function* withHeader(snapshot: SessionSnapshot): AsyncIterable<string> {
  yield snapshot.headerLine;
  yield* snapshot.lines();
}

/** How the incoming session relates to the store's copy of its id (null: none); `IMPORT_CONFLICT` when they diverged. */
async function relationInStore(
  snapshot: SessionSnapshot,
  options: ResolvedSessionManagerOptions,
): Promise<{ relation: SessionRelation | null; ref: string | null }> {
  const backend = backendOf(options);
  const ref = await backend.locate(snapshot.header.id, options);
  if (ref === null) return { relation: null, ref };
  const stored = await backend.exportSnapshot(ref, options);
  const relation = await relateSessionStreams(withHeader(snapshot), withHeader(stored));
  if (relation === "diverged") throw importConflict(snapshot.header.id, ref);
  return { relation, ref };
}

const STATUS: Record<SessionRelation | "none", ImportStatus> = {
  none: "created",
  same: "unchanged",
  storeAhead: "unchanged",
  sourceAhead: "appended",
  diverged: "unchanged", // refused before: never reported
};

/**
 * A refusal the checks could not foresee (a store that takes no quarantine, a lease held elsewhere)
 * after earlier sessions of the bundle were restored: the same code, its message naming those (a
 * second run finds them unchanged).
 */
function partly(err: unknown, id: string, done: readonly UnbundledSession[]): unknown {
  if (!(err instanceof TranscriptStoreError) || done.length === 0) return err;
  const restored = done.map((s) => `${s.id} (${s.status})`).join(", ");
  return new TranscriptStoreError(err.code, `session ${id}: ${err.message}; restored before it: ${restored}`, {
    cause: err,
    ...(err.path === undefined ? {} : { path: err.path }),
  });
}

function spoolParent(options: UnbundleOptions, resolved: ResolvedSessionManagerOptions): string {
  if (options.tempDir !== undefined) return options.tempDir;
  if (resolved.store === null) {
    const root = dirname(resolved.sessionsDir);
    if (io.statSync(root, { throwIfNoEntry: false })?.isDirectory()) return root;
  }
  return tmpdir();
}

/**
 * Restores a bundle (`bundle`'s archive: a file path, or its bytes as a stream) into the store of
 * `options` (the file tree, or `options.store`). All of it is read and checked first (every member
 * against the manifest: `BUNDLE_CORRUPT`), and every session compared with the store's copy of its
 * id under the one rule (`relateSessions`: a diverged one is `IMPORT_CONFLICT`); only then is
 * anything written, each session through the backend's `importSnapshot` (so a second run reports
 * `unchanged`). The spool directory is removed whatever happens.
 */
export async function unbundle(
  source: string | Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: UnbundleOptions = {},
): Promise<UnbundleReport> {
  const resolved = resolveSessionManagerOptions({ ...options, rehydrate: "lazy" });
  const mappings = parseCwdMap((options.cwdMap ?? []).filter((m): m is string => typeof m === "string")).concat(
    (options.cwdMap ?? []).filter((m): m is CwdMapping => isRecord(m)),
  );
  const input = typeof source === "string" ? createReadStream("", { fd: io.openSync(source, "r") }) : source;
  const spool = await spoolBundle(input, spoolParent(options, resolved));
  try {
    const { manifest } = spool;
    const snapshots = manifest.sessions.map((s) => ({ session: s, snapshot: snapshotOf(spool, s, mappings) }));
    const planned: UnbundledSession[] = [];
    for (const { session, snapshot } of snapshots) {
      const { relation, ref } = await relationInStore(snapshot, resolved);
      planned.push({
        id: session.id,
        status: STATUS[relation ?? "none"],
        location: ref,
        cwd: snapshot.header.cwd,
        lines: session.lines,
        artifacts: session.artifacts,
      });
    }
    const blobs = manifest.members.filter((m) => m.name.startsWith(blobMember(""))).length;
    const report = {
      blobs,
      missingBlobs: [...manifest.missingBlobs],
      redacted: manifest.redacted === true,
      dryRun: options.dryRun === true,
    };
    if (options.dryRun === true) return { sessions: planned, ...report };
    const backend = backendOf(resolved);
    const done: UnbundledSession[] = [];
    for (const [i, { snapshot }] of snapshots.entries()) {
      let outcome;
      try {
        outcome = await backend.importSnapshot(snapshot, resolved);
      } catch (err) {
        throw partly(err, snapshot.header.id, done);
      }
      done.push({ ...planned[i]!, status: outcome.status, location: outcome.location });
    }
    return { sessions: done, ...report };
  } finally {
    spool.remove();
  }
}
