import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cwdBucket, detectLayout } from "../../src/session/paths.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { resolveSessionManagerOptions } from "../../src/session/session-options.ts";
import { piDirName, writePiSession } from "../support/pi-tree.ts";
import { tempDir } from "../support/temp-dir.ts";

const ID = "019a0000-0000-7000-8000-000000000001";
const TIME = "2026-01-02T03:04:05.678Z";

function piTree() {
  const base = tempDir();
  const sessionsDir = join(base, "agent", "sessions");
  const cwd = join(base, "proj");
  const path = writePiSession(sessionsDir, cwd, { id: ID, time: TIME });
  return { base, sessionsDir, cwd, path, blobsDir: join(base, "blobs") };
}

describe("cwd bucket layouts", () => {
  it("names a pi bucket exactly as pi 0.73.1 does, an omp bucket home/tmp-relative", () => {
    expect(cwdBucket("/work/a:b\\c/d", "pi")).toBe("--work-a-b-c-d--");
    expect(cwdBucket("/", "pi")).toBe("----");
    const cwd = join(tempDir(), "x");
    expect(cwdBucket(cwd, "pi")).toBe(piDirName(cwd));
    expect(cwdBucket(cwd, "omp").startsWith("-tmp-")).toBe(true);
    expect(cwdBucket(cwd)).toBe(cwdBucket(cwd, "omp"));
  });

  it("keeps every pi name pi can create (up to 255 bytes), shortens only longer ones so mkdir cannot fail", () => {
    const fits = `/${"a".repeat(251)}`;
    expect(cwdBucket(fits, "pi")).toBe(`--${"a".repeat(251)}--`);
    const long = cwdBucket(`/${"a".repeat(252)}`, "pi");
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(255);
    expect(long).not.toBe(cwdBucket(`/${"a".repeat(253)}`, "pi"));
    expect(long.endsWith("--")).toBe(true); // still detected as a pi bucket
  });

  it("detects pi only when every bucket is --…--, omp from -… buckets, nothing when empty or foreign", () => {
    const dir = tempDir();
    expect(detectLayout(join(dir, "absent"))).toBeNull();
    expect(detectLayout(dir)).toBeNull();
    mkdirSync(join(dir, "--work-a--"));
    mkdirSync(join(dir, ".hidden"));
    expect(detectLayout(dir)).toBe("pi");
    mkdirSync(join(dir, "-proj"));
    expect(detectLayout(dir)).toBe("omp");
    mkdirSync(join(dir, "foreign"));
    expect(detectLayout(dir)).toBeNull();
  });

  it("validates the option: a bad value is INVALID_OPTION, an explicit one wins over detection", () => {
    const { sessionsDir } = piTree();
    expect(resolveSessionManagerOptions({ sessionsDir }).layout).toBe("pi");
    expect(resolveSessionManagerOptions({ sessionsDir, layout: "omp" }).layout).toBe("omp");
    expect(resolveSessionManagerOptions({ sessionsDir: tempDir() }).layout).toBe("omp");
    let code: string | undefined;
    try {
      resolveSessionManagerOptions({ sessionsDir, layout: "Pi" as never });
    } catch (err) {
      code = (err as { code?: string }).code;
    }
    expect(code).toBe("INVALID_OPTION");
  });
});

describe("a tree laid out exactly as pi lays it out", () => {
  it("is listed and resumed where it is, and new sessions go into pi's bucket", async () => {
    const { sessionsDir, cwd, path, blobsDir } = piTree();
    const listed = await SessionManager.list(cwd, { sessionsDir, blobsDir });
    expect(listed.map((i) => i.path)).toEqual([path]);
    expect((await SessionManager.listAll({ sessionsDir, blobsDir })).map((i) => i.path)).toEqual([path]);
    // Told "omp", the same tree shows nothing for this cwd: the bucket name really is what matters.
    expect(await SessionManager.list(cwd, { sessionsDir, blobsDir, layout: "omp" })).toEqual([]);

    const m = await SessionManager.continueRecent(cwd, { sessionsDir, blobsDir });
    expect(m.sessionFile).toBe(path);
    expect(m.getLeafId()).toBe("e5f6a7b8");
    const id = m.appendMessage({ role: "user", content: "again" });
    await m.close();
    const last = JSON.parse(readFileSync(path, "utf8").trim().split("\n").at(-1)!);
    expect(last).toMatchObject({ id, parentId: "e5f6a7b8", message: { content: "again" } });

    const fresh = await SessionManager.create(cwd, { sessionsDir, blobsDir });
    expect(fresh.sessionFile!.startsWith(`${join(sessionsDir, piDirName(cwd))}/`)).toBe(true);
    const other = join(cwd, "sub");
    await fresh.moveTo(other);
    expect(fresh.sessionFile!.startsWith(`${join(sessionsDir, piDirName(other))}/`)).toBe(true);
    const fork = await fresh.fork({ cwd });
    expect(fork.sessionFile!.startsWith(`${join(sessionsDir, piDirName(cwd))}/`)).toBe(true);
    await fresh.close();
    await fork.close();
    expect(readdirSync(sessionsDir).sort()).toEqual([piDirName(cwd), piDirName(other)].sort());
  });
});
