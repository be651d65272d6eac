// Differential test of cutting image payloads out of lines before they are parsed (issue 14): for
// seeded random session files holding large payloads in every image shape, mixed with look-alikes,
// a lazy open must give what it gives when no line is cut (the cutter switched off below).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { prng } from "../../fixtures/seeded.ts";
import { isBlobRef } from "../../src/blob/blob-ref.ts";
import type { StoreWarning } from "../../src/errors.ts";
import { CUT_MIN_LINE_BYTES, CUT_MIN_PAYLOAD_BYTES, cutCounters } from "../../src/prepare/cut-payloads.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import type { SessionManagerOptions } from "../../src/session/session-options.ts";
import { int, pick, type Random, storeOneImage } from "../support/differential.ts";
import { sha } from "../support/sha.ts";

/** Off: the loader's cutter finds nothing to cut, so every line is parsed whole (the path before cutting). */
const cutter = vi.hoisted(() => ({ on: true }));
vi.mock("../../src/prepare/cut-payloads.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/prepare/cut-payloads.ts")>();
  return {
    ...original,
    cutImagePayloads: (line: Buffer, threshold: number) => (cutter.on ? original.cutImagePayloads(line, threshold) : null),
  };
});

const CASES = 200;
const FIRST_SEED = 1400;

let root: string;
let storedRef: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "ts-cut-diff-"));
  storedRef = await storeOneImage(root);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

function randomBytes(random: Random, n: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(random() * 256);
  return out;
}

/** A payload size: mostly large enough to be cut, some just around the cut minimum, some small. */
function payloadSize(random: Random): number {
  const cutBytes = (CUT_MIN_PAYLOAD_BYTES / 4) * 3;
  return pick(random, [int(random, cutBytes, 90_000), int(random, cutBytes - 3, cutBytes + 3), int(random, 500, 4000)]);
}

/**
 * The raw JSON text of a base64 payload string, canonical or in one of the shapes a cut must not
 * misread; with what it is.
 */
/** The payload variants the file being generated holds. */
let variantsUsed = new Set<string>();

function base64Text(random: Random): { json: string; variant: string } {
  const b64 = randomBytes(random, payloadSize(random)).toString("base64");
  const variant = pick(random, [
    "plain",
    "plain",
    "plain",
    "escaped slashes",
    "unicode escape",
    "raw spaces",
    "escaped line breaks",
    "no padding",
    "non-zero pad bits",
    "base64url",
    "raw tab",
  ]);
  const k = int(random, 0, b64.length - 5);
  variantsUsed.add(variant);
  switch (variant) {
    case "escaped slashes":
      return { json: `"${b64.replaceAll("/", "\\/")}"`, variant };
    case "unicode escape":
      return { json: `"${b64.slice(0, k)}\\u00${b64.charCodeAt(k).toString(16)}${b64.slice(k + 1)}"`, variant };
    case "raw spaces":
      return { json: `"${b64.replace(/(.{76})/g, "$1 ")}"`, variant };
    case "escaped line breaks":
      return { json: `"${b64.replace(/(.{76})/g, "$1\\n")}\\n"`, variant };
    case "no padding":
      return { json: `"${b64.replace(/=+$/, "")}"`, variant };
    case "non-zero pad bits": {
      const body = b64.replace(/=+$/, "");
      const last = body.charCodeAt(body.length - 1);
      const flipped = String.fromCharCode(last === 0x41 ? 0x42 : last === 0x42 ? 0x43 : 0x41);
      return { json: `"${body.slice(0, -1)}${flipped}${b64.slice(body.length)}"`, variant };
    }
    case "base64url":
      return { json: `"${b64.replaceAll("+", "-").replaceAll("/", "_")}"`, variant };
    case "raw tab":
      return { json: `"${b64.slice(0, k)}\t${b64.slice(k)}"`, variant };
    default:
      return { json: `"${b64}"`, variant };
  }
}

/** The raw JSON text of a data URL string (image or not, canonical or not). */
function dataUrlText(random: Random): string {
  const b64 = randomBytes(random, payloadSize(random)).toString("base64");
  return pick(random, [
    `"data:image/png;base64,${b64}"`,
    `"data:image/png;base64,${b64}"`,
    `"data:image/svg+xml;charset=utf-8;base64,${b64}"`,
    `"data:image\\/png;base64,${b64}"`,
    `"data:image/p\\u006eg;base64,${b64}"`,
    `"data:text/plain;base64,${b64}"`,
    `"data:image/png;base64,${b64.replace(/=+$/, "")}"`,
    `"data:image/png,${b64}"`,
  ]);
}

/** `"data"` followed by a colon, with or without whitespace around it. */
function dataKey(random: Random): string {
  return pick(random, ['"data":', '"data":', '"data" : ', '"data":  ', '"data"\t:', '"d\\u0061ta":']);
}

/** One content block's raw JSON text: an image shape or a look-alike. */
function block(random: Random, depth = 0): string {
  const kind = int(random, 0, 15);
  switch (kind) {
    case 0:
      return `{"type":"image",${dataKey(random)}${base64Text(random).json},"mimeType":"image/png"}`;
    case 1:
      return `{"mimeType":"image/jpeg","type":"image",${dataKey(random)}${base64Text(random).json}}`;
    case 2:
      return `{${dataKey(random)}${base64Text(random).json},"mimeType":"image/webp"}`;
    case 3:
      return `{"type":"image","source":{"type":"base64","media_type":"image/png",${dataKey(random)}${base64Text(random).json}}}`;
    case 4:
      return `{"type":"image_url","image_url":${dataUrlText(random)}}`;
    case 5:
      return `{"type":"image_url","image_url":{"url":${dataUrlText(random)},"detail":"high"}}`;
    case 6: // a document: base64 `data`, no image slot
      return `{"type":"document","source":{"type":"base64","media_type":"application/pdf",${dataKey(random)}${base64Text(random).json}}}`;
    case 7:
      return `{"type":"file",${dataKey(random)}${base64Text(random).json},"mimeType":"application/octet-stream"}`;
    case 8: // a data URL outside an image slot, or in a base64 slot
      return pick(random, [
        `{"type":"text","text":${dataUrlText(random)}}`,
        `{"type":"image","data":${dataUrlText(random)},"mimeType":"image/png"}`,
      ]);
    case 9: // strings holding the placeholder's prefix
      return `{"type":"text","text":${pick(random, ['"\\u0000ts-cut:0"', '"\\u0000ts-cut:1"', '"\\u0000ts-cut:x"', '"ts-cut:0"'])}}`;
    case 10: // a duplicate key (the last one wins)
      return `{"type":"image","data":${base64Text(random).json},"data":${base64Text(random).json},"mimeType":"image/png"}`;
    case 11: // nested arrays
      return depth > 2 ? '"leaf"' : `[${block(random, depth + 1)},[${block(random, depth + 1)}]]`;
    case 12: // a data URL as a key, and as text after an escaped quote
      return pick(random, [`{${dataUrlText(random)}:1,"type":"image_url"}`, `{"type":"text","text":"\\${dataUrlText(random)}}`]);
    case 13: // an image's payload that is a blob ref
      return `{"type":"image","data":"${storedRef}","mimeType":"image/png"}`;
    case 14:
      return `{"type":"text","text":"${"y".repeat(int(random, 0, 70_000))}"}`;
    default:
      return `{"type":"text","text":"see \\"data\\": \\"image\\""}`;
  }
}

/** A random session file: a header, entry lines holding payloads (and the odd broken line). */
function sessionFile(seed: number): { text: string; variants: Set<string> } {
  const random = prng(seed);
  variantsUsed = new Set();
  const lines = [JSON.stringify({ type: "session", version: 3, id: `s${seed}`, timestamp: "t", cwd: "/p" })];
  const n = int(random, 1, 4);
  let parent: string | null = null;
  for (let i = 0; i < n; i++) {
    const blocks = Array.from({ length: int(random, 1, 4) }, () => block(random));
    // Most lines are long enough to be cut; some stay just under the minimum.
    const length = blocks.reduce((sum, b) => sum + b.length, 0);
    if (random() < 0.7 && length < CUT_MIN_LINE_BYTES) blocks.push(`{"type":"text","text":"${"f".repeat(CUT_MIN_LINE_BYTES - length)}"}`);
    const role = pick(random, ['"user"', '"toolResult","toolCallId":"c1"', '"assistant"']);
    const id = `e${i}`;
    const sep = random() < 0.2 ? ", " : ",";
    const head = `{"type":"message","id":"${id}","parentId":${JSON.stringify(parent)}${sep}"timestamp":"t"`;
    let line = `${head},"message":{"role":${role},"content":[${blocks.join(sep)}]}}`;
    if (random() < 0.06) line = line.slice(0, int(random, 10, line.length - 1)); // torn inside
    if (random() < 0.04) line = `${line}x`; // trailing garbage
    lines.push(line);
    parent = id;
  }
  return { text: `${lines.join("\n")}\n`, variants: variantsUsed };
}

/**
 * Each blob ref in `value` with the string `rehydrated` holds in its place: the ref must be the
 * sha256 of that string's bytes (a data URL) or of its decoded bytes (base64).
 */
function checkRefs(value: unknown, rehydrated: unknown, where: string): number {
  if (typeof value === "string") {
    if (!isBlobRef(value) || value === storedRef) return 0;
    expect(typeof rehydrated, where).toBe("string");
    const text = rehydrated as string;
    const bytes = text.startsWith("data:") ? Buffer.from(text, "utf8") : Buffer.from(text, "base64");
    expect(`blob:sha256:${sha(bytes)}`, where).toBe(value);
    return 1;
  }
  if (value === null || typeof value !== "object") return 0;
  let refs = 0;
  for (const [key, child] of Object.entries(value))
    refs += checkRefs(child, (rehydrated as Record<string, unknown>)[key], `${where}.${key}`);
  return refs;
}

async function openLazy(path: string, cut: boolean, options: SessionManagerOptions) {
  const warnings: StoreWarning[] = [];
  cutter.on = cut;
  try {
    const manager = await SessionManager.open(path, { ...options, readOnly: true, onWarning: (w) => warnings.push(w) });
    const entries = manager.getEntries();
    const rehydrated = entries.map((e) => manager.rehydrate(e));
    return { entries, rehydrated, report: manager.loadReport, warnings, manager };
  } finally {
    cutter.on = true;
  }
}

async function runCase(seed: number): Promise<number> {
  const { text, variants } = sessionFile(seed);
  const dir = join(root, "sessions", "cases");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `c${seed}.jsonl`);
  writeFileSync(path, text);
  const bytes = readFileSync(path);
  const options: SessionManagerOptions = {
    root,
    rehydrate: "lazy",
    blobThreshold: pick(prng(seed ^ 0xc0ffee), [1024, 1024, 0, 20_000, 200_000]),
    chunkSize: pick(prng(seed ^ 0xbeef), [1 << 20, 4096, 70_000]),
  };
  const cut = await openLazy(path, true, options);
  const whole = await openLazy(path, false, options);
  const eager = await SessionManager.open(path, { ...options, rehydrate: "eager", readOnly: true, onWarning: () => {} });
  try {
    expect(cut.entries).toEqual(whole.entries);
    expect(cut.report).toEqual(whole.report);
    expect(cut.warnings).toEqual(whole.warnings);
    expect(cut.rehydrated).toEqual(whole.rehydrated);
    // Whitespace in a payload (raw spaces, escaped line breaks) is left out when it rehydrates (the
    // same bytes, see decodeBase64Payload); an eager open keeps the string as read.
    if (!variants.has("raw spaces") && !variants.has("escaped line breaks")) expect(cut.rehydrated).toEqual(eager.getEntries());
    const refs = cut.entries.reduce((sum, e, i) => sum + checkRefs(e, cut.rehydrated[i], `entry ${i}`), 0);
    expect(readFileSync(path).equals(bytes), "the file is unchanged").toBe(true); // (toEqual walks a Buffer byte by byte)
    return refs;
  } finally {
    await cut.manager.close();
    await whole.manager.close();
    await eager.close();
  }
}

describe("a lazy open with payloads cut out of lines equals one that parses every line whole", () => {
  it(`${CASES} seeded files`, async () => {
    const before = { ...cutCounters };
    let refs = 0;
    for (let seed = FIRST_SEED; seed < FIRST_SEED + CASES; seed++) {
      try {
        const t0 = Date.now();
        refs += await runCase(seed);
        if (Date.now() - t0 > 300) console.log("slow", seed, Date.now() - t0);
      } catch (err) {
        const { text } = sessionFile(seed);
        const shown = text.replace(/[A-Za-z0-9+/_\-\\ ]{200,}/g, (run) => `<${run.length} base64 chars from ${run.slice(0, 12)}>`);
        throw new Error(`seed ${seed}, file:\n${shown.slice(0, 4000)}\n${(err as Error).message}`, { cause: err });
      }
    }
    // The generator makes the cutter work, and refuse (else the comparison proves little).
    expect(cutCounters.payloadsCut - before.payloadsCut).toBeGreaterThan(CASES / 2);
    expect(cutCounters.restoresRefused - before.restoresRefused).toBeGreaterThan(0);
    expect(refs).toBeGreaterThan(CASES / 2);
  });
});
