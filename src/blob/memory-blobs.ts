import { createHash } from "node:crypto";
import type { Blobs } from "./blobs.ts";
import { parseBlobRef, toBlobRef } from "./blob-ref.ts";

/** A content-addressed blob store held in memory only (incognito sessions): nothing is written. */
export class MemoryBlobs implements Blobs {
  private readonly bytes = new Map<string, Buffer>();

  async put(bytes: Uint8Array): Promise<{ hash: string; ref: string; existed: boolean }> {
    const hash = createHash("sha256").update(bytes).digest("hex");
    const existed = this.bytes.has(hash);
    if (!existed) this.bytes.set(hash, Buffer.from(bytes));
    return { hash, ref: toBlobRef(hash), existed };
  }
  async get(hashOrRef: string): Promise<Buffer | null> {
    return this.getVerifiedSync(hashOrRef);
  }
  async has(hashOrRef: string): Promise<boolean> {
    return this.bytes.has(parseBlobRef(hashOrRef));
  }
  async *list(): AsyncIterable<string> {
    yield* [...this.bytes.keys()];
  }
  async delete(hashOrRef: string): Promise<boolean> {
    return this.bytes.delete(parseBlobRef(hashOrRef));
  }
  /** The bytes of a ref (a copy), or null. */
  getVerifiedSync(hashOrRef: string): Buffer | null {
    const found = this.bytes.get(parseBlobRef(hashOrRef));
    return found === undefined ? null : Buffer.from(found);
  }
  /** A name for messages: there is no path. */
  pathOf(hashOrRef: string): string {
    return `memory:${parseBlobRef(hashOrRef)}`;
  }
  /** Forgets every blob (on close). */
  clear(): void {
    this.bytes.clear();
  }
}
