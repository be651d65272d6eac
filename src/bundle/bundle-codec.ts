import { Readable } from "node:stream";
import { createGunzip, createGzip } from "node:zlib";

/** How a bundle may be compressed: gzip (node:zlib), told apart from a plain tar by its magic bytes. */
export type BundleCodec = "gzip";

/** Each codec's compressing stream. */
const CODECS: Record<BundleCodec, () => import("node:stream").Transform> = { gzip: () => createGzip() };

/** gzip's two magic bytes (RFC 1952); a tar archive starts with a member name, never these. */
const GZIP_MAGIC = [0x1f, 0x8b] as const;

/** `bytes` compressed with `codec`: a stream whose failure carries the source's error. */
export function compressed(bytes: Readable, codec: BundleCodec): Readable {
  const gzip = CODECS[codec]();
  bytes.on("error", (err) => gzip.destroy(err));
  return bytes.pipe(gzip);
}

/**
 * The bytes of a bundle as a tar archive: a gzip-compressed one (its first two bytes the gzip
 * magic) decompressed as it is read, anything else passed on as it is.
 */
export async function* uncompressed(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<Buffer> {
  const chunks = (async function* () {
    for await (const chunk of source) yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
  })();
  let head: Buffer = Buffer.alloc(0);
  while (head.length < GZIP_MAGIC.length) {
    const next = await chunks.next();
    if (next.done === true) break;
    head = head.length === 0 ? next.value : Buffer.concat([head, next.value]);
  }
  const rest = (async function* () {
    if (head.length > 0) yield head;
    yield* chunks;
  })();
  if (head[0] !== GZIP_MAGIC[0] || head[1] !== GZIP_MAGIC[1]) {
    yield* rest;
    return;
  }
  const input = Readable.from(rest, { objectMode: false });
  const gunzip = createGunzip();
  input.on("error", (err) => gunzip.destroy(err));
  yield* input.pipe(gunzip) as AsyncIterable<Buffer>;
}
