/** A content-addressed blob store as the public API exposes it (file or database). */
export interface Blobs {
  put(bytes: Uint8Array): Promise<{ hash: string; ref: string; existed: boolean }>;
  get(hashOrRef: string): Promise<Buffer | null>;
  has(hashOrRef: string): Promise<boolean>;
  list(): AsyncIterable<string>;
  delete(hashOrRef: string): Promise<boolean>;
}
