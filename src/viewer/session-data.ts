import { statSync } from "node:fs";
import { usageOfEntries } from "../accounting/entries-usage.ts";
import { BlobStore } from "../blob/blob-store.ts";
import { isBlobRef } from "../blob/blob-ref.ts";
import { ArtifactStore } from "../artifacts/artifact-store.ts";
import type { SessionEntry, SessionHeader } from "../format/types.ts";
import { viewOf } from "../interchange/message-parts.ts";
import { redactForSharing } from "../session/redact-for-sharing.ts";
import { artifactsDirOf } from "../session/paths.ts";
import type { SessionInfo } from "../session/session-info.ts";
import type { SessionManager } from "../session/session-manager.ts";
import { resolveSessionManagerOptions } from "../session/session-options.ts";
import { sharingRedactorOf } from "../storage/sharing-key.ts";
import { sessionHref } from "./page.ts";
import { readSkeletonEntries, scanSkeleton, type Skeleton, type TreeNode } from "./session-skeleton.ts";
import type { ViewerStore } from "./viewer-store.ts";

/** An artifact as the page lists it (its text is served on its own link). */
export interface PageArtifact {
  id: string;
  uri: string;
  name: string | null;
  toolType: string;
  sizeBytes: number;
}

/**
 * A session as the pages read it: the tree as nodes (id, parent), and entries parsed on demand, so a
 * page of a 100 MB session parses only what it shows. Two sources give it: a skeleton of a plain v3
 * file (`session-skeleton.ts`), or the session opened whole (a database, an encrypted or older file).
 */
export interface SessionView {
  info: SessionInfo;
  header: SessionHeader;
  nodes: readonly TreeNode[];
  byId: ReadonlyMap<string, number>;
  /** The session's leaf: its last entry. */
  leafId: string | null;
  /** The entries of `ids`, parsed (and, in the sharing view, redacted). */
  entries(ids: readonly string[]): Map<string, SessionEntry>;
  /** Image `index` of an entry, its bytes read back from the blob store (a damaged blob is never served); null when none. */
  image(entryId: string, index: number): Promise<{ type: string; bytes: Buffer } | null>;
  artifacts(): PageArtifact[];
  /** An artifact's text (shared in the sharing view), or null. */
  artifactText(id: string): string | null;
  /** Redacts a value in the sharing view (the identity otherwise). */
  share<T>(value: T): T;
  /** Models and cost from every entry (reads them all). */
  usage(): { models: string[]; cost: number | null };
  imageLink(entryId: string, index: number): string;
  close(): Promise<void>;
}

/** How many views were served each way (tests check which path a session took). */
export const skeletonsServed = { skeleton: 0, whole: 0 };

/** Skeletons kept between requests, by path (a grown file is scanned from where its skeleton ends). @default 4 */
const KEPT_SKELETONS = 4;
const skeletons = new Map<string, Skeleton>();

function skeletonOf(path: string): Skeleton | null {
  const kept = skeletons.get(path) ?? null;
  const sk = scanSkeleton(path, kept);
  skeletons.delete(path);
  if (sk === null) return null;
  skeletons.set(path, sk);
  while (skeletons.size > KEPT_SKELETONS) skeletons.delete(skeletons.keys().next().value!);
  return sk;
}

/** The entries of `nodes`, read `size` at a time (each batch dropped once walked). */
function* batches(nodes: readonly TreeNode[], size: number, read: (ids: string[]) => Iterable<SessionEntry>): Generator<SessionEntry> {
  for (let i = 0; i < nodes.length; i += size) yield* read(nodes.slice(i, i + size).map((n) => n.id));
}

/** The image part of an entry as bytes, given how to turn a blob ref into bytes. */
async function imagePart(
  entry: SessionEntry | undefined,
  index: number,
  blob: (ref: string) => Promise<Buffer | null>,
  rehydrate: (e: SessionEntry) => SessionEntry,
): Promise<{ type: string; bytes: Buffer } | null> {
  if (entry === undefined) return null;
  const raw = viewOf(entry)?.parts[index];
  if (raw === undefined || raw.kind !== "image" || !/^image\/[a-z0-9.+-]+$/i.test(raw.mimeType)) return null;
  const type = raw.mimeType.toLowerCase();
  if (isBlobRef(raw.data)) {
    const bytes = await blob(raw.data);
    if (bytes !== null) return { type, bytes };
    const part = viewOf(rehydrate(entry))?.parts[index];
    if (part?.kind !== "image" || isBlobRef(part.data)) return null;
    return { type, bytes: Buffer.from(part.data, "base64") };
  }
  const payload = raw.data.replace(/[ \t\r\n]/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(payload)) return null;
  return { type, bytes: Buffer.from(payload, "base64") };
}

/** Opens the view of a session for one request (or an event stream's change); close it after. */
export async function openSessionView(
  store: ViewerStore,
  info: SessionInfo,
  options: { redact: boolean /** Open the session whole even where a skeleton would do (tests compare the two). */; whole?: boolean },
): Promise<SessionView> {
  const resolved = resolveSessionManagerOptions(store.options);
  const redactor = options.redact ? await sharingRedactorOf(resolved.store, store.options.root, true) : null;
  const share = <T>(value: T): T => (redactor === null ? value : redactForSharing(value, redactor, new Map()));
  const imageLink = (entryId: string, index: number) => `${sessionHref(info.id)}/image/${encodeURIComponent(entryId)}/${index}`;
  const isFile = resolved.store === null || resolved.store === undefined;
  const sk = isFile && options.whole !== true && statSync(info.path, { throwIfNoEntry: false })?.isFile() ? skeletonOf(info.path) : null;
  if (sk !== null) {
    skeletonsServed.skeleton++;
    const blobs = new BlobStore(resolved.blobsDir, { readOnly: true });
    const artifacts = new ArtifactStore(artifactsDirOf(info.path));
    const read = (ids: readonly string[]) => readSkeletonEntries(sk, ids);
    return {
      info,
      header: share(sk.header),
      nodes: sk.nodes,
      byId: sk.byId,
      leafId: sk.nodes.length === 0 ? null : sk.nodes[sk.nodes.length - 1]!.id,
      entries: (ids) => new Map([...read(ids)].map(([id, e]) => [id, share(e)])),
      image: (entryId, index) =>
        imagePart(
          read([entryId]).get(entryId),
          index,
          (ref) => blobs.get(ref, { verify: true }).catch(() => null),
          (e) => e,
        ),
      artifacts: () =>
        artifacts.list().map((a) => share({ id: a.id, uri: a.uri, name: a.name ?? null, toolType: a.toolType, sizeBytes: a.sizeBytes })),
      artifactText: (id) => {
        const text = artifacts.getText(id);
        return text === null ? null : share(text);
      },
      share,
      // Every entry, a batch at a time: a 100 MB session is never held parsed whole.
      usage: () =>
        usageOfEntries(
          sk.header,
          batches(sk.nodes, 256, (ids) => read(ids).values()),
        ),
      imageLink,
      close: async () => {},
    };
  }
  const m: SessionManager = await store.open(info);
  skeletonsServed.whole++;
  const all = m.getEntries();
  const byId = new Map(all.map((e, i) => [e.id, i]));
  return {
    info,
    header: share(m.header),
    nodes: all,
    byId,
    leafId: m.getLeafId(),
    entries: (ids) => {
      const out = new Map<string, SessionEntry>();
      for (const id of ids) {
        const e = m.getEntry(id);
        if (e !== undefined) out.set(id, share(e));
      }
      return out;
    },
    image: (entryId, index) =>
      imagePart(
        m.getEntry(entryId),
        index,
        async () => null,
        (e) => m.rehydrate(e),
      ),
    artifacts: () =>
      (m.artifacts?.list() ?? []).map((a) =>
        share({ id: a.id, uri: a.uri, name: a.name ?? null, toolType: a.toolType, sizeBytes: a.sizeBytes }),
      ),
    artifactText: (id) => {
      const text = m.artifacts?.getText(id) ?? null;
      return text === null ? null : share(text);
    },
    share,
    usage: () => usageOfEntries(m.header, all),
    imageLink,
    close: () => m.close(),
  };
}
