import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TranscriptStoreError } from "../../src/errors.ts";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { verifySessionFile } from "../../src/maintenance/verify.ts";
import { quarantinePathOf } from "../../src/session/paths.ts";
import { readSessionInfo } from "../../src/session/session-info.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const SEED = Number(process.env.FUZZ_SEED ?? 424242);

function validSession(version: 1 | 3): Buffer {
  const lines: object[] = [
    version === 3
      ? { type: "session", version: 3, id: "fuzz-session", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/fuzz" }
      : { type: "session", id: "fuzz-legacy", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/fuzz" },
  ];
  let parent: string | null = null;
  for (let i = 0; i < 12; i++) {
    const id = (0xa0000000 + i).toString(16);
    const base = version === 3 ? { id, parentId: parent } : {};
    lines.push({
      type: "message",
      ...base,
      timestamp: "2025-01-01T00:00:01.000Z",
      message: { role: i % 2 ? "assistant" : "user", content: [{ type: "text", text: `line ${i} — ünïcødé ✓ ${"x".repeat(i * 7)}` }] },
    });
    parent = id;
  }
  return Buffer.from(`${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
}

type Corruption =
  | { kind: "truncate"; at: number }
  | { kind: "flip"; at: number; value: number }
  | { kind: "nuls"; at: number; length: number }
  | { kind: "invalidUtf8"; at: number }
  | { kind: "duplicate"; line: number }
  | { kind: "swap"; a: number; b: number }
  | { kind: "hugeLine"; line: number; size: number }
  | { kind: "deep"; line: number; depth: number };

const corruption: fc.Arbitrary<Corruption> = fc.oneof(
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant("nuls" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 5000 }) }),
  fc.record({ kind: fc.constant("invalidUtf8" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("duplicate" as const), line: fc.nat() }),
  fc.record({ kind: fc.constant("swap" as const), a: fc.nat(), b: fc.nat() }),
  fc.record({ kind: fc.constant("hugeLine" as const), line: fc.nat(), size: fc.integer({ min: 100_000, max: 2_000_000 }) }),
  fc.record({ kind: fc.constant("deep" as const), line: fc.nat(), depth: fc.integer({ min: 100, max: 50_000 }) }),
);

function apply(data: Buffer, c: Corruption): Buffer {
  if (["duplicate", "swap", "hugeLine", "deep"].includes(c.kind) && data.indexOf(0x0a) === -1) return data;
  const lines = () =>
    data
      .toString("latin1")
      .split("\n")
      .slice(0, -1)
      .map((l) => Buffer.from(l, "latin1"));
  const join_ = (ls: Buffer[]) => Buffer.concat(ls.flatMap((l) => [l, Buffer.from("\n")]));
  switch (c.kind) {
    case "truncate":
      return data.subarray(0, c.at % (data.length + 1));
    case "flip": {
      const out = Buffer.from(data);
      if (out.length > 0) out[c.at % out.length] = c.value;
      return out;
    }
    case "nuls": {
      const at = c.at % (data.length + 1);
      return Buffer.concat([data.subarray(0, at), Buffer.alloc(c.length), data.subarray(at)]);
    }
    case "invalidUtf8": {
      const at = c.at % (data.length + 1);
      return Buffer.concat([data.subarray(0, at), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), data.subarray(at)]);
    }
    case "duplicate": {
      const ls = lines();
      const i = c.line % ls.length;
      ls.splice(i, 0, ls[i]!);
      return join_(ls);
    }
    case "swap": {
      const ls = lines();
      const a = c.a % ls.length;
      const b = c.b % ls.length;
      [ls[a], ls[b]] = [ls[b]!, ls[a]!];
      return join_(ls);
    }
    case "hugeLine": {
      const ls = lines();
      const huge = Buffer.from(
        JSON.stringify({
          type: "message",
          id: "ffff0000",
          parentId: null,
          timestamp: "t",
          message: { role: "toolResult", content: "y".repeat(c.size) },
        }),
      );
      ls.splice(c.line % ls.length, 0, huge);
      return join_(ls);
    }
    case "deep": {
      const ls = lines();
      const deep = Buffer.from(
        `{"type":"custom","id":"dddd0000","parentId":null,"timestamp":"t","data":${"[".repeat(c.depth)}"image` +
          `"${"]".repeat(c.depth)},"x":"${"z".repeat(1100)}"}`,
      );
      ls.splice(c.line % ls.length, 0, deep);
      return join_(ls);
    }
  }
}

function expectStoreErrorOrNothing(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    expect(err, String((err as Error)?.stack)).toBeInstanceOf(TranscriptStoreError);
    expect(typeof (err as TranscriptStoreError).code).toBe("string");
  }
}

/** Lines of the corrupted file that are byte-identical to one of the original entry lines. */
function intactOriginalIds(original: Buffer, corrupted: Buffer): string[] {
  const originals = new Map<string, string>();
  for (const l of original.toString("utf8").split("\n").slice(1)) if (l) originals.set(l, JSON.parse(l).id);
  const complete = corrupted
    .subarray(0, corrupted.lastIndexOf(0x0a) + 1)
    .toString("latin1")
    .split("\n");
  const ids = new Set<string>();
  for (const l of complete) {
    const text = Buffer.from(l, "latin1").toString("utf8");
    const id = originals.get(text);
    if (id !== undefined) ids.add(id);
  }
  return [...ids];
}

describe("fuzzing: corrupted sessions never crash open, verify, list or migrate", () => {
  it(`random corruption (seed ${SEED}, ${RUNS} runs)`, async () => {
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom<1 | 3>(1, 3), fc.array(corruption, { minLength: 1, maxLength: 3 }), async (version, corruptions) => {
        cases++;
        const dir = tempDir("ts-fuzz-");
        const original = validSession(version);
        const corrupted = corruptions.reduce(apply, original);
        const path = join(dir, "s.jsonl");
        writeFileSync(path, corrupted);

        expectStoreErrorOrNothing(() => verifySessionFile(path, { blobsDir: join(dir, "blobs") }));
        expectStoreErrorOrNothing(() => readSessionInfo(path));
        const listed = await SessionManager.listAll({ sessionsDir: dir, root: dir }).catch((e) => e);
        expect(Array.isArray(listed) || listed instanceof TranscriptStoreError).toBe(true);

        const migrateCopy = join(dir, "m.jsonl");
        writeFileSync(migrateCopy, corrupted);
        const report = await migrateFile(migrateCopy, { sessionsDir: join(dir, "store"), blobsDir: join(dir, "blobs"), inPlace: true });
        if (report.status === "failed") expect(readFileSync(migrateCopy).equals(corrupted)).toBe(true);

        let manager: SessionManager | null = null;
        try {
          manager = await SessionManager.open(path, { root: dir });
        } catch (err) {
          expect(err).toBeInstanceOf(TranscriptStoreError);
          expect(["BAD_HEADER", "PERSISTENCE_FAILED"]).toContain((err as TranscriptStoreError).code);
          expect(readFileSync(path).equals(corrupted)).toBe(true); // never overwritten
          return;
        }
        const ids = new Set(manager.getEntries().map((e) => e.id));
        if (version === 3)
          for (const id of intactOriginalIds(original, corrupted)) expect(ids.has(id), `intact line ${id} lost`).toBe(true);
        // every byte of every malformed line is still in the file or in quarantine
        const onDisk = readFileSync(path);
        const q = existsSync(quarantinePathOf(path))
          ? readFileSync(quarantinePathOf(path), "utf8")
              .split("\n")
              .filter(Boolean)
              .map((l) => JSON.parse(l))
          : [];
        const quarantined = q.map((r) => (typeof r.text === "string" ? Buffer.from(r.text, "utf8") : Buffer.from(r.base64, "base64")));
        for (const m of manager.loadReport.malformed) {
          const raw = corrupted.subarray(
            m.offset,
            corrupted.indexOf(0x0a, m.offset) === -1 ? corrupted.length : corrupted.indexOf(0x0a, m.offset),
          );
          const kept = onDisk.includes(raw) || quarantined.some((b) => b.equals(raw) || b.subarray(b.length - raw.length).equals(raw));
          expect(kept, `malformed line ${m.line} lost`).toBe(true);
        }
        manager.appendMessage({ role: "user", content: "after fuzz" });
        await manager.close();
        const again = await SessionManager.open(path, { root: dir, readOnly: true });
        expect(again.getEntries().at(-1)).toMatchObject({ message: { content: "after fuzz" } });
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    console.log(`fuzz: ${cases} corruption cases (seed ${SEED}), all handled with codes, lost = 0`);
  }, 300_000);
});
