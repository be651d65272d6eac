import { isRecord } from "../format/types.ts";
import type { RedactionCounts, SecretRedactor } from "../prepare/redact-secrets.ts";
import { redactBytesForSharing, redactForSharing } from "../session/redact-for-sharing.ts";
import { hashesOfLines, type SessionSnapshot, type SnapshotArtifact } from "../storage/session-snapshot.ts";

/**
 * A session snapshot as it may be shared (a redacted bundle): every secret in its header, entry
 * lines, quarantine records and artifact files replaced by a marker (`redactForSharing`, the
 * store's key); ids, blob refs, image payloads and blob bytes untouched. A line without a secret
 * stays byte for byte. Read on demand like its source: nothing is held whole.
 */

/** Bytes of an artifact redacted at once: a window of whole lines (a secret never spans two windows but at a cut). */
const WINDOW = 1024 * 1024;

/**
 * What redaction found, per part of the snapshots (a part may be read more than once: the last
 * read's counts stand), summed on demand: rule id → secrets replaced.
 */
export class RedactionTally {
  private readonly parts = new Map<string, RedactionCounts>();

  /** A fresh count for `part`, replacing the one of its earlier read. */
  start(part: string): RedactionCounts {
    const counts: RedactionCounts = new Map();
    this.parts.set(part, counts);
    return counts;
  }

  total(): RedactionCounts {
    const out: RedactionCounts = new Map();
    for (const counts of this.parts.values()) for (const [rule, n] of counts) out.set(rule, (out.get(rule) ?? 0) + n);
    return out;
  }
}

/** One stored line redacted: a JSON line through its values (the same text when nothing was found), any other as text. */
export function redactLine(line: string, redactor: SecretRedactor, counts: RedactionCounts): string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return redactor.redactText(line, counts);
  }
  const out = redactForSharing(value, redactor, counts);
  return out === value ? line : JSON.stringify(out);
}

/** A quarantine record redacted: its `text`, and the bytes of its `base64`, through the redactor. */
function redactQuarantine(record: string, redactor: SecretRedactor, counts: RedactionCounts): string {
  let value: unknown;
  try {
    value = JSON.parse(record);
  } catch {
    return redactor.redactText(record, counts);
  }
  if (!isRecord(value)) return redactLine(record, redactor, counts);
  let out = redactForSharing(value, redactor, counts);
  if (typeof value.base64 === "string") {
    const bytes = Buffer.from(value.base64, "base64");
    const redacted = redactBytesForSharing(bytes, redactor, counts);
    if (redacted !== bytes) out = { ...out, base64: redacted.toString("base64") };
  }
  return out === value ? record : JSON.stringify(out);
}

async function* mapLines(lines: AsyncIterable<string>, map: (line: string) => string): AsyncIterable<string> {
  for await (const line of lines) yield map(line);
}

/** Where to cut a window out of `held`: after its last newline, else its last space or tab, else at `WINDOW`. */
function cutOf(held: Buffer): number {
  const nl = held.lastIndexOf(0x0a, WINDOW - 1);
  if (nl !== -1) return nl + 1;
  const space = Math.max(held.lastIndexOf(0x20, WINDOW - 1), held.lastIndexOf(0x09, WINDOW - 1));
  return space !== -1 ? space + 1 : WINDOW;
}

/** An artifact's bytes redacted a window at a time (`redactBytesForSharing`: every byte but a secret's kept). */
export async function* redactPieces(
  pieces: AsyncIterable<Buffer>,
  redactor: SecretRedactor,
  counts: RedactionCounts,
): AsyncIterable<Buffer> {
  let held: Buffer = Buffer.alloc(0);
  for await (const piece of pieces) {
    held = held.length === 0 ? piece : Buffer.concat([held, piece]);
    while (held.length >= WINDOW) {
      const cut = cutOf(held);
      yield redactBytesForSharing(held.subarray(0, cut), redactor, counts);
      held = held.subarray(cut);
    }
  }
  if (held.length > 0) yield redactBytesForSharing(held, redactor, counts);
}

function redactArtifact(
  artifact: SnapshotArtifact,
  size: number,
  redactor: SecretRedactor,
  tally: RedactionTally,
  part: string,
): SnapshotArtifact {
  return { name: artifact.name, size, open: () => redactPieces(artifact.open(), redactor, tally.start(part)) };
}

/** `snapshot` redacted for sharing (see above); what was found goes to `tally`, `part` naming the session in it. */
export function redactSnapshot(snapshot: SessionSnapshot, redactor: SecretRedactor, tally: RedactionTally, part: string): SessionSnapshot {
  const headerCounts = tally.start(`${part}/header`);
  const header = redactForSharing(snapshot.header, redactor, headerCounts);
  const headerLine = header === snapshot.header ? snapshot.headerLine : redactLine(snapshot.headerLine, redactor, new Map());
  return {
    ...snapshot,
    header,
    headerLine,
    lines: () => {
      const counts = tally.start(`${part}/lines`);
      return mapLines(snapshot.lines(), (line) => redactLine(line, redactor, counts));
    },
    quarantine: () => {
      const q = tally.start(`${part}/quarantine`);
      return mapLines(snapshot.quarantine(), (record) => redactQuarantine(record, redactor, q));
    },
    artifacts: async function* () {
      for await (const artifact of snapshot.artifacts()) {
        // the size a tar header states first: one read to measure, the counts of the read that is written
        const key = `${part}/artifacts/${artifact.name}`;
        let size = 0;
        for await (const piece of redactPieces(artifact.open(), redactor, tally.start(key))) size += piece.length;
        yield redactArtifact(artifact, size, redactor, tally, key);
      }
    },
    // redaction leaves blob refs as they are: the same hashes, read from the redacted lines
    blobHashes: () => hashesOfLines(snapshot.lines()),
  };
}
