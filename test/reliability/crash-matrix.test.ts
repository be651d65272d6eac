import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { BlobStore } from "../../src/blob/blob-store.ts";
import { TranscriptStoreError } from "../../src/errors.ts";
import { cwdBucket, quarantinePathOf } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { journalPathOf } from "../../src/session/session-move.ts";
import { prng, spawnTs } from "../support/child.ts";
import { writeImageHeavyLegacySession } from "../support/legacy-images.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sha } from "../support/sha.ts";

const CHILD = join(import.meta.dirname, "helpers/crash-child.ts");
const ROUNDS = Number(process.env.RELIABILITY_ROUNDS ?? 20);
const SEED = Number(process.env.RELIABILITY_SEED ?? 77);

function ageLocks(dir: string): void {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory() && e.name.endsWith(".lock")) utimesSync(p, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    else if (e.isDirectory()) ageLocks(p);
  }
}

function refsResolve(path: string, blobsDir: string): void {
  for (const m of readFileSync(path, "utf8").matchAll(/blob:sha256:([0-9a-f]{64})/g))
    expect(existsSync(join(blobsDir, m[1]!)), `dangling ${m[1]}`).toBe(true);
}

/**
 * Spawns the child for `op` and SIGKILLs it at a seeded moment: `delayMs` after its first
 * acknowledged step (so the kill lands while it works, not while Node starts), or after spawn
 * when `fromSpawn` is set. Returns its acknowledged lines.
 */
async function runAndKill(
  op: string,
  work: string,
  root: string,
  delayMs: number,
  fromSpawn = false,
): Promise<{ acks: string[]; killed: boolean }> {
  const child = spawnTs(CHILD, [op, work, root]);
  const acks: string[] = [];
  let buffer = "";
  let timer: NodeJS.Timeout | undefined = fromSpawn ? setTimeout(() => child.kill("SIGKILL"), delayMs) : undefined;
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (d: string) => {
    buffer += d;
    const parts = buffer.split("\n");
    buffer = parts.pop()!;
    acks.push(...parts);
    if (timer === undefined && acks.length > 0) timer = setTimeout(() => child.kill("SIGKILL"), delayMs);
  });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_c, s) => resolve(s)));
  clearTimeout(timer);
  if (signal !== "SIGKILL" && stderr.trim()) throw new Error(`child ${op} failed: ${stderr}`);
  return { acks, killed: signal === "SIGKILL" };
}

/** Runs one move in a child that SIGKILLs itself just before its `killAt`th effectful I/O call. */
async function runMoveKilledAt(work: string, root: string, killAt: number): Promise<{ killed: boolean }> {
  process.env.TS_KILL_AT = String(killAt);
  const child = spawnTs(CHILD, ["move-once", work, root]);
  delete process.env.TS_KILL_AT;
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_c, s) => resolve(s)));
  if (signal !== "SIGKILL" && stderr.trim()) throw new Error(`move child failed: ${stderr}`);
  return { killed: signal === "SIGKILL" };
}

/** Where the move journal beside `from` says the session is going, if there is one. */
function journalTarget(from: string): string | null {
  try {
    return (JSON.parse(readFileSync(from.replace(/\.jsonl$/, ".move.json"), "utf8")) as { to: string }).to;
  } catch {
    return null;
  }
}

const summary: string[] = [];

describe("crash matrix: SIGKILL at seeded moments of every operation", () => {
  const random = prng(SEED);
  const fixtureDir = mkdtempSync(join(tmpdir(), "ts-crash-fixture-"));
  const legacy = join(fixtureDir, "legacy.jsonl");
  writeImageHeavyLegacySession(legacy, { seed: 1, count: 4, imageSize: 150_000 });
  afterAll(() => rmSync(fixtureDir, { recursive: true, force: true }));

  for (const op of ["rewrite", "migrate"] as const) {
    it(`${op}: every file is its original or a complete v3 file; the next write succeeds`, async () => {
      let kills = 0;
      let checked = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const root = tempDir();
        const work = join(root, "work");
        mkdirSync(work);
        for (let i = 0; i < 4; i++) copyFileSync(legacy, join(work, `s${i}.jsonl`));
        const { killed } = await runAndKill(op, work, root, Math.floor(random() * 25));
        if (killed) kills++;
        ageLocks(work);
        for (const name of readdirSync(work).filter((n) => n.endsWith(".jsonl"))) {
          const path = join(work, name);
          checked++;
          if (readFileSync(path).equals(readFileSync(legacy))) continue;
          const m = await SessionManager.open(path, { root, readOnly: true, rehydrate: "lazy" });
          expect(m.header.version).toBe(3);
          expect(m.loadReport.malformed).toEqual([]);
          expect(m.getEntries()).toHaveLength(8);
          refsResolve(path, join(root, "blobs"));
        }
        for (const name of readdirSync(work).filter((n) => n.endsWith(".jsonl"))) {
          const m = await SessionManager.open(join(work, name), { root, rehydrate: "lazy" });
          m.appendMessage({ role: "user", content: "next write" });
          await m.close();
        }
      }
      expect(kills, "no round was killed mid-operation").toBeGreaterThan(ROUNDS / 4);
      summary.push(`${op}: ${ROUNDS} rounds, ${kills} kills, ${checked} files checked, lost = 0`);
    }, 600_000);
  }

  it("fork: the source never changes; every fork on disk is complete", async () => {
    let kills = 0;
    let forks = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const root = tempDir();
      const src = await SessionManager.create(join(root, "proj"), { root });
      for (let i = 0; i < 5; i++) src.appendMessage({ role: i % 2 ? "assistant" : "user", content: `m${i}` });
      mkdirSync(src.artifactsDir!);
      for (let i = 0; i < 5; i++) writeFileSync(join(src.artifactsDir!, `${i}.bash.log`), `artifact ${i} `.repeat(2000));
      await src.close();
      const sourceBytes = readFileSync(src.sessionFile!);
      const work = join(root, "sessions", cwdBucket(join(root, "proj")));
      const { acks, killed } = await runAndKill("fork", work, root, 300 + Math.floor(random() * 700), true);
      if (killed) kills++;
      expect(readFileSync(src.sessionFile!).equals(sourceBytes)).toBe(true);
      for (const ack of acks) expect(existsSync(ack.slice("fork ".length))).toBe(true);
      for (const name of readdirSync(work).filter((n) => n.endsWith(".jsonl") && !n.includes(src.sessionId))) {
        forks++;
        const f = await SessionManager.open(join(work, name), { root, readOnly: true });
        expect(f.loadReport.malformed).toEqual([]);
        // a fork is written whole; the child's append after it may or may not have happened
        expect(f.getEntries().length === 5 || f.getEntries().length === 6).toBe(true);
        expect(f.header.parentSession).toBe(src.sessionId);
        for (let i = 0; i < 5; i++)
          expect(readFileSync(join(f.artifactsDir!, `${i}.bash.log`), "utf8")).toBe(`artifact ${i} `.repeat(2000));
      }
      ageLocks(work);
      const next = await SessionManager.open(src.sessionFile!, { root });
      next.appendMessage({ role: "user", content: "next write" });
      await next.close();
    }
    expect(kills, "no round was killed mid-operation").toBeGreaterThan(ROUNDS / 4);
    summary.push(`fork: ${ROUNDS} rounds, ${kills} kills, ${forks} forks checked, lost = 0`);
  }, 600_000);

  it("move: after recovery the session is whole at exactly one place", async () => {
    let kills = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const root = tempDir();
      const m = await SessionManager.create(join(root, "cwd-0"), { root });
      for (let i = 0; i < 4; i++) m.appendMessage({ role: "user", content: `m${i}` });
      mkdirSync(m.artifactsDir!);
      writeFileSync(join(m.artifactsDir!, "0.bash.log"), "artifact body");
      writeFileSync(quarantinePathOf(m.sessionFile!), '{"type":"quarantine","text":"x"}\n');
      await m.close();
      const name = basename(m.sessionFile!);
      const candidates = ["cwd-0", "cwd-a", "cwd-b"].map((c) => join(root, "sessions", cwdBucket(join(root, c)), name));
      const { killed } = await runAndKill("move", join(root, "sessions", cwdBucket(join(root, "cwd-0"))), root, Math.floor(random() * 40));
      if (killed) kills++;
      ageLocks(join(root, "sessions"));
      for (const p of candidates) {
        if (!existsSync(journalPathOf(p))) continue;
        try {
          await (await SessionManager.open(p, { root })).close();
        } catch (err) {
          expect(err).toBeInstanceOf(TranscriptStoreError);
          expect((err as TranscriptStoreError).code).toBe("SESSION_NOT_FOUND");
        }
      }
      const present = candidates.filter((p) => existsSync(p));
      expect(present, `round ${round}`).toHaveLength(1);
      const at = present[0]!;
      const s = await SessionManager.open(at, { root });
      expect(s.getEntries()).toHaveLength(4);
      expect(at).toContain(cwdBucket(s.cwd));
      expect(readFileSync(join(s.artifactsDir!, "0.bash.log"), "utf8")).toBe("artifact body");
      expect(existsSync(quarantinePathOf(at))).toBe(true);
      for (const p of candidates.filter((c) => c !== at)) expect(existsSync(p.replace(/\.jsonl$/, ""))).toBe(false);
      s.appendMessage({ role: "user", content: "next write" });
      await s.close();
    }
    expect(kills, "no round was killed mid-operation").toBeGreaterThan(ROUNDS / 4);
    summary.push(`move: ${ROUNDS} rounds, ${kills} kills, lost = 0`);
  }, 600_000);

  for (const order of ["destination", "source"] as const) {
    it(`move: at every kill point, with the ${order} opened first, the session is whole at exactly one place`, async () => {
      let kills = 0;
      for (let killAt = 0; ; killAt++) {
        expect(killAt, "the move never finished").toBeLessThan(200);
        const root = tempDir();
        const m = await SessionManager.create(join(root, "cwd-0"), { root });
        for (let i = 0; i < 4; i++) m.appendMessage({ role: "user", content: `m${i}` });
        mkdirSync(m.artifactsDir!);
        writeFileSync(join(m.artifactsDir!, "0.bash.log"), "artifact body");
        writeFileSync(quarantinePathOf(m.sessionFile!), '{"type":"quarantine","text":"x"}\n');
        await m.close();
        const from = m.sessionFile!;
        const to = join(root, "sessions", cwdBucket(join(root, "cwd-a")), basename(from));
        const { killed } = await runMoveKilledAt(dirname(from), root, killAt);
        ageLocks(join(root, "sessions"));
        // Open every path the disk still names: the file itself, a note or a journal pointing at it.
        const beside = (p: string) => [p, p.replace(/\.jsonl$/, ".move-in.json"), p.replace(/\.jsonl$/, ".move.json")];
        const named = (p: string) => beside(p).some((q) => existsSync(q)) || journalTarget(from) === p;
        for (const p of order === "destination" ? [to, from] : [from, to]) {
          if (!named(p)) continue;
          try {
            await (await SessionManager.open(p, { root })).close();
          } catch (err) {
            expect((err as TranscriptStoreError).code, `kill at ${killAt}: ${(err as Error).message}`).toBe("SESSION_NOT_FOUND");
          }
        }
        const present = [from, to].filter((p) => existsSync(p));
        expect(present, `kill at ${killAt}`).toHaveLength(1);
        const at = present[0]!;
        if (!killed) expect(at).toBe(to);
        const s = await SessionManager.open(at, { root });
        expect(s.getEntries().map((e) => (e as { message?: { content?: unknown } }).message?.content)).toEqual(["m0", "m1", "m2", "m3"]);
        expect(readFileSync(join(s.artifactsDir!, "0.bash.log"), "utf8")).toBe("artifact body");
        expect(existsSync(quarantinePathOf(at))).toBe(true);
        const other = at === from ? to : from;
        expect(existsSync(other.replace(/\.jsonl$/, "")), `kill at ${killAt}: artifacts left at the other place`).toBe(false);
        expect(existsSync(quarantinePathOf(other))).toBe(false);
        for (const dir of [dirname(from), dirname(to)].filter((d) => existsSync(d))) {
          // (a kill while a journal itself is written may leave that tiny dot-file's temp: harmless)
          const leftovers = readdirSync(dir).filter((n) => /\.(jsonl\.\d+\.[0-9a-f]+\.tmp|move\.json|move-in\.json)$/.test(n));
          expect(leftovers, `kill at ${killAt}: leftovers`).toEqual([]);
        }
        s.appendMessage({ role: "user", content: "next write" });
        await s.close();
        if (!killed) break;
        kills++;
      }
      expect(kills, "too few kill points").toBeGreaterThan(8);
      summary.push(`move (${order} opened first): ${kills} kill points, lost = 0`);
    }, 600_000);
  }

  for (const op of ["artifact-save", "sink-spill"] as const) {
    it(`${op}: acknowledged artifacts read back exactly; nothing is half-written under its final name`, async () => {
      let kills = 0;
      let checked = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const root = tempDir();
        const dir = join(root, "artifacts");
        const { acks, killed } = await runAndKill(op, dir, root, Math.floor(random() * 60));
        if (killed) kills++;
        const store = new ArtifactStore(dir);
        for (const ack of acks) {
          const [, id, expected] = ack.split(" ");
          const content = store.getText(id!);
          expect(content, `${op} ${id}`).not.toBeNull();
          expect(sha(content!)).toBe(expected);
          checked++;
        }
        for (const ref of store.list()) {
          const text = store.getText(ref.id)!;
          expect(Buffer.byteLength(text), `artifact ${ref.id}`).toBe(ref.sizeBytes);
        }
        const next = store.save("next write", { toolType: "bash" });
        expect(store.getText(next.id)).toBe("next write");
      }
      expect(kills, "no round was killed mid-operation").toBeGreaterThan(ROUNDS / 4);
      summary.push(`${op}: ${ROUNDS} rounds, ${kills} kills, ${checked} acknowledged artifacts checked, lost = 0`);
    }, 600_000);
  }

  it("gc: a kill never costs a referenced blob", async () => {
    let kills = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const root = tempDir();
      const m = await SessionManager.create(join(root, "p"), { root });
      for (let i = 0; i < 3; i++)
        m.appendMessage({
          role: "user",
          content: [{ type: "image", data: makePng(24, 24, round * 10 + i).toString("base64"), mimeType: "image/png" }],
        });
      await m.close();
      const store = new BlobStore(join(root, "blobs"));
      for (let i = 0; i < 30; i++) store.putSync(Buffer.from(`orphan ${round} ${i}`));
      const { killed } = await runAndKill("gc", join(root, "sessions"), root, Math.floor(random() * 40));
      if (killed) kills++;
      refsResolve(m.sessionFile!, join(root, "blobs"));
      for await (const hash of store.list()) expect(await store.verify(hash)).toBe(true);
      const again = await SessionManager.open(m.sessionFile!, { root });
      expect(again.getEntries()).toHaveLength(3);
      again.appendMessage({ role: "user", content: "next write" });
      await again.close();
      expect(statSync(join(root, "blobs")).isDirectory()).toBe(true);
    }
    expect(kills, "no round was killed mid-operation").toBeGreaterThan(ROUNDS / 4);
    summary.push(`gc: ${ROUNDS} rounds, ${kills} kills, lost = 0`);
    console.log(summary.join("\n"));
  }, 600_000);
});
