// Differential test of forkFrom's byte copy (issue 14): for seeded random source files, damaged in
// every way a parse of the source notices, the fork forkFrom makes (byte copy or fallback) must be
// the fork the open-and-fork path makes (forkFrom through a file backend without `forkWhole`).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prng } from "../../../fixtures/seeded.ts";
import { TranscriptStoreError, type StoreWarning } from "../../../src/errors.ts";
import { SessionManager } from "../../../src/session/session-manager.ts";
import type { SessionManagerOptions } from "../../../src/session/session-options.ts";
import { fileBackend } from "../../../src/storage/file/file-backend.ts";
import { forkCopyStats } from "../../../src/storage/file/fork-copy.ts";
import { cutCounters } from "../../../src/prepare/cut-payloads.ts";
import { int, pick, type Random, storeOneImage } from "../../support/differential.ts";
import { makePng } from "../../support/png.ts";

const CASES = 200;
const FIRST_SEED = 14_000;
/** The file backend without the byte copy: forkFrom then opens the source and forks it (the old path). */
const openAndForkStore = { ...fileBackend, forkWhole: undefined };

let root: string;
/** A blob the store holds (its ref resolves) and one it does not. */
let storedRef: string;
const missingRef = `blob:sha256:${"ab".repeat(32)}`;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "ts-fork-diff-"));
  storedRef = await storeOneImage(root);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

const TEXTS = ["hello", "ça va ? 日本", 'quote " and \\ backslash', "tab\tand\nnewline", "{}", "", "\u2028 sep", "emoji 🎉"];

/** About 90 KB of base64 (its bytes are no PNG: the store checks only that they decode). */
function largePayload(seed: number): string {
  const random = prng(seed);
  const bytes = Buffer.allocUnsafe(68_000);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
  return bytes.toString("base64");
}

/** One entry's content: text, blocks, an inline image (small or large), a blob ref (stored or missing). */
function content(random: Random, seed: number): unknown {
  switch (int(random, 0, 6)) {
    case 0:
      return pick(random, TEXTS);
    case 1:
      return [{ type: "text", text: pick(random, TEXTS) }];
    case 2:
      return [{ type: "image", data: makePng(int(random, 4, 24), int(random, 4, 24), seed).toString("base64"), mimeType: "image/png" }];
    case 3:
      return [{ type: "image", data: pick(random, [storedRef, missingRef]), mimeType: "image/png" }];
    case 4:
      return [{ type: "image_url", image_url: `data:image/png;base64,${makePng(12, 12, seed + 1).toString("base64")}` }];
    case 5: // large enough for a lazy read to cut it out of its line before parsing
      return [{ type: "image", data: largePayload(seed), mimeType: "image/png" }];
    default:
      return [{ type: "text", text: "x".repeat(int(random, 0, 300)) }];
  }
}

/** The entry lines (no newline) of a random tree: branches, repeated ids, a missing id. */
function entryLines(random: Random, seed: number): string[] {
  const ids: string[] = [];
  const lines: string[] = [];
  const n = int(random, 1, 10);
  for (let i = 0; i < n; i++) {
    const roll = random();
    const id = roll < 0.08 && ids.length > 0 ? pick(random, ids) : `e${seed}-${i}`;
    const parentId = ids.length === 0 || random() < 0.05 ? null : random() < 0.7 ? ids[ids.length - 1]! : pick(random, ids);
    const role = pick(random, ["user", "assistant"]);
    const entry: Record<string, unknown> =
      random() < 0.1
        ? { type: "custom", customType: "note", data: { n: i }, id, parentId, timestamp: "2026-01-01T00:00:00.000Z" }
        : { type: "message", id, parentId, timestamp: "2026-01-01T00:00:01.000Z", message: { role, content: content(random, seed + i) } };
    if (random() < 0.04) delete entry.id;
    ids.push(id);
    lines.push(JSON.stringify(entry));
  }
  return lines;
}

/** A random source file: a header (mostly v3), entries, then random damage; also what was done. */
function sourceFile(seed: number): { bytes: Buffer; damage: string[] } {
  const random = prng(seed);
  const damage: string[] = [];
  const version = random() < 0.15 ? pick(random, [1, 2, undefined]) : 3;
  const header: Record<string, unknown> = {
    type: "session",
    id: `0190a5d2-0000-7000-8000-${String(seed).padStart(12, "0")}`,
    timestamp: "2026-01-01T00:00:00.000Z",
    cwd: "/p",
  };
  if (version !== undefined) header.version = version;
  if (version !== 3) damage.push(`header version ${version}`);
  const lines = entryLines(random, seed);
  const at = () => int(random, 0, lines.length);
  const maybe = (p: number, name: string, apply: () => void) => {
    if (random() < p) {
      damage.push(name);
      apply();
    }
  };
  maybe(0.15, "glued records", () => {
    const i = int(random, 0, lines.length - 1);
    if (i + 1 < lines.length) lines.splice(i, 2, lines[i]! + lines[i + 1]!);
  });
  maybe(0.15, "malformed line", () =>
    lines.splice(at(), 0, pick(random, ["this is not json", '{"type":"message","id":', "[1,2,3]", "null"])),
  );
  maybe(0.1, "blank lines", () => lines.splice(at(), 0, "", ...(random() < 0.5 ? [" "] : [])));
  maybe(0.1, "pretty-printed fragment", () =>
    lines.splice(at(), 0, ...pick(random, [["{", "}"], ['  "x": 1,'], ["  {", '    "y": [1, 2]', "  },"]])),
  );
  maybe(0.05, "pretty-printed file", () => {
    const all = lines.map((l) => {
      try {
        return JSON.stringify(JSON.parse(l), null, 2);
      } catch {
        return l;
      }
    });
    lines.splice(0, lines.length, ...all.join("\n").split("\n"));
  });
  maybe(0.08, "NUL run in a line", () => {
    const i = int(random, 0, lines.length - 1);
    if (lines.length > 0) lines[i] = "\0".repeat(int(random, 1, 6)) + lines[i]!;
  });
  let text = `${JSON.stringify(header)}\n${lines.map((l) => `${l}\n`).join("")}`;
  maybe(0.08, "NUL run between lines", () => {
    const nl = text.lastIndexOf("\n", int(random, 0, text.length - 1));
    if (nl !== -1) text = `${text.slice(0, nl + 1)}${"\0".repeat(int(random, 1, 9))}${text.slice(nl + 1)}`;
  });
  maybe(0.1, "CRLF endings", () => {
    text = random() < 0.5 ? text.replaceAll("\n", "\r\n") : text.replace(/\n(?=[^\n]*\n[^\n]*$)/, "\r\n");
  });
  maybe(0.1, "torn last line", () => {
    text = random() < 0.5 ? text.slice(0, -1) : `${text}{"type":"message","id":"torn","par`;
  });
  maybe(0.05, "a BOM", () => {
    text = `\uFEFF${text}`;
  });
  maybe(0.04, "a blank line before the header", () => {
    text = `\n${text}`;
  });
  maybe(0.03, "a title line before the header", () => {
    text = `${JSON.stringify({ type: "title", title: "named" })}\n${text}`;
  });
  maybe(0.02, "no header", () => {
    text = text.slice(text.indexOf("\n") + 1);
  });
  return { bytes: Buffer.from(text, "utf8"), damage };
}

function bodyOf(path: string): Buffer {
  const bytes = readFileSync(path);
  return bytes.subarray(bytes.indexOf(0x0a) + 1);
}

/** The fork's header without what differs between any two forks (their own id and creation time). */
function headerShape(path: string): Record<string, unknown> {
  const text = readFileSync(path, "utf8");
  const { id: _id, timestamp: _ts, ...rest } = JSON.parse(text.slice(0, text.indexOf("\n")));
  return rest;
}

interface Outcome {
  error?: string;
  fork?: SessionManager;
  warnings: StoreWarning[];
}

async function forkWith(source: string, cwd: string, options: SessionManagerOptions): Promise<Outcome> {
  const warnings: StoreWarning[] = [];
  try {
    const fork = await SessionManager.forkFrom(source, cwd, { ...options, onWarning: (w) => warnings.push(w) });
    return { fork, warnings };
  } catch (err) {
    if (!(err instanceof TranscriptStoreError)) throw err;
    return { error: err.code, warnings };
  }
}

/** What is compared of a fork once its entries were read (the read settles a byte-copied fork's file). */
function observed(fork: SessionManager) {
  const entries = fork.getEntries();
  return {
    entries,
    leaf: fork.getLeafId(),
    context: fork.buildContext(),
    rehydrated: fork.buildContext({ rehydrate: true }),
    report: fork.loadReport,
    body: bodyOf(fork.sessionFile!).toString("latin1"),
    header: headerShape(fork.sessionFile!),
  };
}

/** The warnings, with the fork's own path (each fork's differs) named alike. */
function warningsOf(outcome: Outcome): StoreWarning[] {
  const own = outcome.fork?.sessionFile;
  return outcome.warnings.map((w) => (own !== undefined && w.path === own ? { ...w, path: "<the fork>" } : w));
}

async function runCase(seed: number): Promise<{ copied: boolean; error?: string }> {
  const random = prng(seed ^ 0x5eed);
  const { bytes } = sourceFile(seed);
  const dir = join(root, "sources");
  mkdirSync(dir, { recursive: true });
  const source = join(dir, `s${seed}.jsonl`);
  writeFileSync(source, bytes);
  const options: SessionManagerOptions = {
    root,
    rehydrate: pick(random, ["eager", "lazy"] as const),
    chunkSize: pick(random, [3, 17, 64, 1000, 1 << 20]),
    blobThreshold: pick(random, [64, 1024]),
  };
  const copies = forkCopyStats.copies;
  const cwd = join(root, "forks", String(seed));
  const fast = await forkWith(source, cwd, options);
  const copied = forkCopyStats.copies > copies;
  const slow = await forkWith(source, cwd, { ...options, store: openAndForkStore });
  try {
    expect(fast.error).toBe(slow.error);
    if (slow.error !== undefined) {
      expect(await SessionManager.list(cwd, { root })).toEqual([]);
    } else {
      const a = observed(fast.fork!);
      const b = observed(slow.fork!);
      expect(a.entries).toEqual(b.entries);
      expect(a.leaf).toBe(b.leaf);
      expect(a.context).toEqual(b.context);
      expect(a.rehydrated).toEqual(b.rehydrated);
      expect(a.header).toEqual(b.header);
      expect(a.body).toBe(b.body);
      expect(a.report).toEqual(b.report);
      // Appending continues from the same leaf.
      const idA = fast.fork!.appendMessage({ role: "user", content: "after" });
      const idB = slow.fork!.appendMessage({ role: "user", content: "after" });
      expect(fast.fork!.getEntry(idA)!.parentId).toBe(slow.fork!.getEntry(idB)!.parentId);
    }
    // Codes, messages, and the path named (the source's, the blob's, or the fork's own).
    expect(warningsOf(fast)).toEqual(warningsOf(slow));
    expect(readFileSync(source).equals(bytes), "the source is unchanged").toBe(true); // (toEqual walks a Buffer byte by byte)
  } finally {
    await fast.fork?.close();
    await slow.fork?.close();
  }
  return { copied, ...(slow.error === undefined ? {} : { error: slow.error }) };
}

describe("forkFrom (byte copy or fallback) equals opening and forking the source, on random damaged sources", () => {
  it(`${CASES} seeded cases`, async () => {
    let copied = 0;
    let refused = 0;
    const cutBefore = cutCounters.payloadsCut;
    for (let seed = FIRST_SEED; seed < FIRST_SEED + CASES; seed++) {
      let result: { copied: boolean; error?: string };
      try {
        result = await runCase(seed);
      } catch (err) {
        const { bytes, damage } = sourceFile(seed);
        const shown = bytes.length > 1500 ? `${bytes.subarray(0, 1500).toString("utf8")}…` : bytes.toString("utf8");
        throw new Error(`seed ${seed} (damage: ${damage.join(", ") || "none"}):\n${JSON.stringify(shown)}\n${(err as Error).message}`, {
          cause: err,
        });
      }
      if (result.copied) copied++;
      if (result.error !== undefined) refused++;
    }
    // The generator reaches both paths and the refusals (else the comparison proves little).
    expect(copied).toBeGreaterThan(CASES / 4);
    expect(CASES - copied - refused).toBeGreaterThan(CASES / 10);
    expect(refused).toBeGreaterThan(0);
    expect(cutCounters.payloadsCut - cutBefore).toBeGreaterThan(0); // lazy reads cut large payloads
  });
});
