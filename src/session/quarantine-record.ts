import type { MalformedLine } from "../format/load-report.ts";
import { io, writeFully } from "../io.ts";

/** One quarantined item as written to `<stem>.quarantine.jsonl`. */
export function quarantineRecord(
  source: string,
  item: { line?: number; offset: number; reason: string; bytes: Buffer },
  at: string,
): string {
  const record: Record<string, unknown> = {
    type: "quarantine",
    source,
    line: item.line ?? null,
    offset: item.offset,
    reason: item.reason,
    quarantinedAt: at,
  };
  const text = item.bytes.toString("utf8");
  if (Buffer.from(text, "utf8").equals(item.bytes)) record.text = text;
  else record.base64 = item.bytes.toString("base64");
  return `${JSON.stringify(record)}\n`;
}

/** A quarantine record for a too-large line, its bytes streamed from its file as base64. */
type StreamedItem = Pick<MalformedLine, "offset" | "reason" | "length" | "source"> & { line?: number };

/**
 * Writes the record into the quarantine file `SessionFile.quarantine` opened (`fd`): only the
 * writer (session-file.ts) calls it.
 */
export function writeStreamedRecord(fd: number, source: string, item: StreamedItem, at: string): void {
  if (item.source === undefined || item.length === undefined) throw new Error("a too-large line must name the file holding it");
  const head = { type: "quarantine", source, line: item.line ?? null, offset: item.offset, reason: item.reason, quarantinedAt: at };
  writeFully(fd, Buffer.from(`${JSON.stringify(head).slice(0, -1)},"base64":"`));
  const chunk = 3 * (1 << 18); // a multiple of 3: every piece encodes without padding but the last
  let carried = 0;
  copyFileRange(item.source, item.offset, item.length, chunk, (data) => {
    carried += data.length;
    writeFully(fd, Buffer.from(data.toString("base64")));
  });
  if (carried !== item.length) throw new Error(`${item.source} changed while its line was quarantined`);
  writeFully(fd, Buffer.from('"}\n'));
}

/** Streams `length` bytes of `path` from `offset` in pieces of exactly `chunk` bytes (the last one shorter). */
export function copyFileRange(path: string, offset: number, length: number, chunk: number, emit: (data: Buffer) => void): void {
  const fd = io.openSync(path, "r");
  const buffer = Buffer.allocUnsafe(chunk);
  try {
    let done = 0;
    while (done < length) {
      let filled = 0;
      const want = Math.min(chunk, length - done);
      while (filled < want) {
        const n = io.readSync(fd, buffer, filled, want - filled, offset + done + filled);
        if (n === 0) return;
        filled += n;
      }
      emit(buffer.subarray(0, filled));
      done += filled;
    }
  } finally {
    io.closeSync(fd);
  }
}
