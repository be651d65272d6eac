import { createCipheriv, createHash } from "node:crypto";
import { closeSync, openSync, writeSync } from "node:fs";

/** Deterministic pseudo-random image bytes (AES-CTR keystream), prefixed with a PNG signature. */
export function imageBytes(seed: number, index: number, size: number): Buffer {
  const key = createHash("sha256").update(`${seed}:${index}`).digest();
  const cipher = createCipheriv("aes-256-ctr", key, Buffer.alloc(16));
  const bytes = cipher.update(Buffer.alloc(size));
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes);
  return bytes;
}

/**
 * Writes a pi v1 session with `count` user messages each carrying one inline base64 image of
 * `imageSize` bytes (the pi#9613 shape), streaming so the writer itself stays small.
 */
export function writeImageHeavyLegacySession(path: string, options: { seed: number; count: number; imageSize: number }): void {
  const fd = openSync(path, "w");
  try {
    writeSync(
      fd,
      `${JSON.stringify({ type: "session", id: `legacy-${options.seed}`, timestamp: "2025-06-01T00:00:00.000Z", cwd: "/home/u/big" })}\n`,
    );
    for (let i = 0; i < options.count; i++) {
      const data = imageBytes(options.seed, i, options.imageSize).toString("base64");
      const user = {
        type: "message",
        timestamp: "2025-06-01T00:00:01.000Z",
        message: {
          role: "user",
          content: [
            { type: "text", text: `screenshot ${i}` },
            { type: "image", data, mimeType: "image/png" },
          ],
        },
      };
      writeSync(fd, `${JSON.stringify(user)}\n`);
      const reply = {
        type: "message",
        timestamp: "2025-06-01T00:00:02.000Z",
        message: { role: "assistant", content: [{ type: "text", text: `I see screenshot ${i}` }] },
      };
      writeSync(fd, `${JSON.stringify(reply)}\n`);
    }
  } finally {
    closeSync(fd);
  }
}
