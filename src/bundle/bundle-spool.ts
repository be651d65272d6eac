import { rawLines } from "../storage/session-file-lines.ts";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Readable } from "node:stream";
import tar from "tar-stream";
import { hashesIn } from "../storage/session-snapshot.ts";
import { DIR_MODE, FILE_MODE, io, writeFully } from "../io.ts";
import { hostTag, reclaimDeadSpools } from "./spool-owner.ts";
import { artifactNameClash, clashMessage } from "../storage/artifact-name-clash.ts";
import {
  type BundleManifest,
  bundleCorrupt,
  classifyMember,
  headerMember,
  linesMember,
  MANIFEST_NAME,
  parseManifest,
  quarantineMember,
  unsafeMemberName,
} from "./bundle-manifest.ts";

/**
 * A bundle read whole into a spool directory and checked against its manifest before anything is
 * restored: every member's name (no path out of the bundle, no link, no name no bundle holds), its
 * size and sha256, no member missing or extra, each session's header, line counts and the blobs its
 * lines reference. The spool files are named by number, never by a member's name.
 */

/** The longest manifest read (it lists every member: far below this). */
const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

export interface SpooledBundle {
  readonly dir: string;
  readonly manifest: BundleManifest;
  /** The spool file holding member `name` (a member the manifest lists), or null. */
  pathOf(name: string): string | null;
  /** Removes the spool directory. Idempotent. */
  remove(): void;
}

interface Spooled {
  path: string;
  size: number;
  sha256: string;
}

/**
 * A new spool directory under `parent`: a dot name ending in `.tmp`, as every temp name of ours,
 * naming its owner (spool-owner.ts); the spools of killed processes are reclaimed first.
 */
function makeSpoolDir(parent: string): string {
  reclaimDeadSpools(parent);
  const dir = join(parent, `.unbundle-${process.pid}@${hostTag()}-${randomBytes(6).toString("hex")}.tmp`);
  io.mkdirSync(dir, { mode: DIR_MODE });
  return dir;
}

/** Copies one member into the spool, measuring it on the way. */
async function spoolMember(entry: AsyncIterable<Buffer>, path: string): Promise<Spooled> {
  const hash = createHash("sha256");
  let size = 0;
  const fd = io.openSync(path, "wx", FILE_MODE);
  try {
    for await (const chunk of entry) {
      hash.update(chunk);
      writeFully(fd, chunk);
      size += chunk.length;
    }
  } finally {
    io.closeSync(fd);
  }
  return { path, size, sha256: hash.digest("hex") };
}

async function readAll(entry: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of entry) {
    size += chunk.length;
    if (size > MAX_MANIFEST_BYTES) throw bundleCorrupt(`its manifest is larger than ${MAX_MANIFEST_BYTES} bytes`);
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

/** Every member of the archive into `dir`; the manifest's text. Refuses a member no bundle holds before reading it. */
async function extractAll(
  source: Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  dir: string,
): Promise<{ files: Map<string, Spooled>; manifest: Buffer }> {
  const extract = tar.extract();
  const feed = (async () => {
    for await (const chunk of source) {
      if (!extract.write(chunk as Buffer)) await new Promise<void>((resolve) => extract.once("drain", () => resolve()));
    }
    extract.end(() => {});
  })().catch((err: unknown) => extract.destroy(err as Error));
  const files = new Map<string, Spooled>();
  let manifest: Buffer | null = null;
  try {
    for await (const entry of extract) {
      const { name, type } = entry.header;
      const unsafe = unsafeMemberName(name);
      if (unsafe !== null) throw bundleCorrupt(`member ${JSON.stringify(name)}: ${unsafe}`);
      if (type !== "file") throw bundleCorrupt(`member ${JSON.stringify(name)} is a ${type ?? "typeless"} entry, not a file`);
      if (files.has(name) || (name === MANIFEST_NAME && manifest !== null))
        throw bundleCorrupt(`member ${JSON.stringify(name)} appears twice`);
      if (classifyMember(name) === null) throw bundleCorrupt(`member ${JSON.stringify(name)} is not a part of any bundle`);
      const bytes = entry as AsyncIterable<Buffer>;
      if (name === MANIFEST_NAME) manifest = await readAll(bytes);
      else files.set(name, await spoolMember(bytes, join(dir, `m${files.size}`)));
    }
  } catch (err) {
    extract.destroy();
    if (err instanceof Error && "code" in err && (err as { code: unknown }).code === "BUNDLE_CORRUPT") throw err;
    // A failure of the disk or of the source (ENOSPC, EIO, …) is itself, not a damaged bundle.
    if (err instanceof Error && "syscall" in err) throw err;
    throw bundleCorrupt(`it is not a whole tar archive (${(err as Error)?.message ?? String(err)})`);
  }
  await feed;
  if (manifest === null) throw bundleCorrupt(`it has no ${MANIFEST_NAME} (a truncated archive?)`);
  return { files, manifest };
}

/** Lines of a spooled text member (`\n`-terminated), as strings, a chunk at a time (the file tree's line reader). */
export const spooledLines: (path: string) => AsyncIterable<string> = rawLines;

/** Counts the lines of a text member (each must end in `\n`) and gathers the blob hashes they name. */
async function scanText(path: string, size: number, refs: Set<string>): Promise<number> {
  let count = 0;
  for await (const line of spooledLines(path)) {
    count++;
    for (const hash of hashesIn(line)) refs.add(hash);
  }
  if (size > 0) {
    const fd = io.openSync(path, "r");
    try {
      const last = Buffer.alloc(1);
      io.readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) throw bundleCorrupt(`${path}: its last line has no newline`);
    } finally {
      io.closeSync(fd);
    }
  }
  return count;
}

/** The manifest against the members found: same names, sizes and hashes, nothing missing or extra. */
function checkMembers(manifest: BundleManifest, files: Map<string, Spooled>): void {
  const listed = new Set<string>();
  for (const m of manifest.members) {
    if (listed.has(m.name)) throw bundleCorrupt(`its manifest lists ${JSON.stringify(m.name)} twice`);
    listed.add(m.name);
    const found = files.get(m.name);
    if (found === undefined) throw bundleCorrupt(`member ${JSON.stringify(m.name)} is missing`);
    if (found.size !== m.size) throw bundleCorrupt(`member ${JSON.stringify(m.name)} has ${found.size} bytes, the manifest says ${m.size}`);
    if (found.sha256 !== m.sha256) throw bundleCorrupt(`member ${JSON.stringify(m.name)} does not match its sha256 (damaged)`);
  }
  for (const name of files.keys()) if (!listed.has(name)) throw bundleCorrupt(`member ${JSON.stringify(name)} is not in its manifest`);
}

/** Each session: its parts present, a header naming its id, the counts the manifest states; every blob ref carried or declared missing. */
async function checkSessions(manifest: BundleManifest, files: Map<string, Spooled>): Promise<void> {
  const dirs = new Set(manifest.sessions.map((s) => s.dir));
  const ids = new Set(manifest.sessions.map((s) => s.id));
  if (dirs.size !== manifest.sessions.length || ids.size !== manifest.sessions.length) {
    throw bundleCorrupt("its manifest names a session or a session folder twice");
  }
  const blobs = new Set<string>();
  const artifacts = new Map<string, number>();
  const artifactNames = new Map<string, string[]>();
  for (const [name, file] of files) {
    const kind = classifyMember(name)!;
    if (kind.kind === "blob") {
      if (file.sha256 !== kind.hash) throw bundleCorrupt(`blob ${kind.hash} holds other bytes (sha256 ${file.sha256})`);
      blobs.add(kind.hash);
    } else if (kind.kind === "session") {
      if (!dirs.has(kind.dir)) throw bundleCorrupt(`member ${JSON.stringify(name)} belongs to no session of the manifest`);
      if (kind.part.startsWith("artifacts/")) {
        artifacts.set(kind.dir, (artifacts.get(kind.dir) ?? 0) + 1);
        artifactNames.set(kind.dir, [...(artifactNames.get(kind.dir) ?? []), kind.part.slice("artifacts/".length)]);
      }
    }
  }
  const refs = new Set<string>();
  for (const session of manifest.sessions) {
    const part = (name: string) => {
      const file = files.get(name);
      if (file === undefined) throw bundleCorrupt(`session ${session.id} lacks ${name}`);
      return file;
    };
    const header = part(headerMember(session.dir));
    const headerText = io.readFileSync(header.path, "utf8");
    if (!headerText.endsWith("\n") || headerText.indexOf("\n") !== headerText.length - 1) {
      throw bundleCorrupt(`session ${session.id}: its header member is not one line`);
    }
    let value: unknown;
    try {
      value = JSON.parse(headerText);
    } catch {
      throw bundleCorrupt(`session ${session.id}: its header is not JSON`);
    }
    const h = value as { type?: unknown; id?: unknown };
    if (h?.type !== "session" || h.id !== session.id) throw bundleCorrupt(`session ${session.id}: its header names another session`);
    const lines = part(linesMember(session.dir));
    if ((await scanText(lines.path, lines.size, refs)) !== session.lines)
      throw bundleCorrupt(`session ${session.id}: line count differs from the manifest`);
    const quarantine = part(quarantineMember(session.dir));
    if ((await scanText(quarantine.path, quarantine.size, new Set())) !== session.quarantine) {
      throw bundleCorrupt(`session ${session.id}: quarantine count differs from the manifest`);
    }
    if ((artifacts.get(session.dir) ?? 0) !== session.artifacts)
      throw bundleCorrupt(`session ${session.id}: artifact count differs from the manifest`);
    const clash = artifactNameClash(artifactNames.get(session.dir) ?? []);
    if (clash !== null) throw bundleCorrupt(`session ${session.id}: ${clashMessage(clash)}`);
  }
  const declared = new Set(manifest.missingBlobs);
  for (const hash of refs) {
    if (!blobs.has(hash) && !declared.has(hash)) throw bundleCorrupt(`blob ${hash}, referenced by its sessions, is missing`);
  }
}

/**
 * Reads the bundle `source` into a spool directory made under `parent` and checks all of it (see
 * above); `BUNDLE_CORRUPT` with the spool removed on the first problem. The caller removes the
 * spool once it has restored from it.
 */
export async function spoolBundle(
  source: Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  parent: string,
): Promise<SpooledBundle> {
  const dir = makeSpoolDir(parent);
  const remove = () => io.rmSync(dir, { recursive: true, force: true });
  try {
    const { files, manifest: text } = await extractAll(source, dir);
    const manifest = parseManifest(text.toString("utf8"));
    checkMembers(manifest, files);
    await checkSessions(manifest, files);
    return { dir, manifest, pathOf: (name) => files.get(name)?.path ?? null, remove };
  } catch (err) {
    remove();
    throw err;
  }
}
