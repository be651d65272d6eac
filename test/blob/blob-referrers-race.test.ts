import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { forgetReferrers, readReferrers, registerReferrer } from "../../src/blob/blob-referrers.ts";
import { lockBlobStore } from "../../src/blob/gc-lock.ts";
import { onLines, runTs, spawnTs } from "../support/child.ts";
import { codeOf } from "../support/error-code.ts";
import { injectFault } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers", "referrers-child.ts");

describe("the referrers registry under a concurrent forget", () => {
  it("keeps every registration another process appends while a forget rewrites the registry", async () => {
    const blobsDir = join(tempDir(), "blobs");
    const stop = join(blobsDir, "..", "stop");
    const forgetter = spawnTs(CHILD, [blobsDir, "forget", stop]);
    let stderr = "";
    forgetter.stderr!.on("data", (d) => (stderr += d));
    const rounds: string[] = [];
    const ready = new Promise<void>((resolve) => onLines(forgetter, (line) => (line === "ready" ? resolve() : rounds.push(line))));
    const exited = new Promise<number | null>((resolve) => forgetter.on("close", resolve));
    await ready;
    const registrant = await runTs(CHILD, [blobsDir, "register", "1500", "/registered/place"]);
    writeFileSync(stop, "");
    expect(await exited, stderr).toBe(0);
    expect(registrant.code, registrant.stderr).toBe(0);
    expect(Number(rounds[0])).toBeGreaterThan(1); // the forgetter really rewrote the registry meanwhile
    const places = new Set((readReferrers(blobsDir) ?? []).map((r) => r.path));
    const lost = Array.from({ length: 1500 }, (_, i) => `/registered/place-${i}`).filter((p) => !places.has(p));
    expect(lost).toEqual([]);
    expect(places.has(`${blobsDir}-forget-me`)).toBe(false);
  });
});

describe("forgetReferrers", () => {
  it("copies over a registration appended to the old registry while the new one was being written", () => {
    const blobsDir = join(tempDir(), "blobs");
    registerReferrer(blobsDir, { kind: "dir", path: "/a" });
    registerReferrer(blobsDir, { kind: "dir", path: "/gone" });
    const file = join(blobsDir, ".referrers.jsonl");
    // Another process appends between forget's read and its rename (through its own descriptor).
    const restore = injectFault("renameSync", (_call, args) => {
      if (args[1] === file) appendFileSync(file, `${JSON.stringify({ kind: "tree", path: "/late" })}\n`);
      return undefined;
    });
    try {
      expect(forgetReferrers(blobsDir, ["/gone"])).toEqual([{ kind: "dir", path: "/gone" }]);
    } finally {
      restore();
    }
    expect(readFileSync(file, "utf8")).toBe('{"kind":"dir","path":"/a"}\n{"kind":"tree","path":"/late"}\n');
  });

  it("refuses with STORE_BUSY while a gc holds the blob store, changing nothing", async () => {
    const blobsDir = join(tempDir(), "blobs");
    registerReferrer(blobsDir, { kind: "dir", path: "/gone" });
    const before = readFileSync(join(blobsDir, ".referrers.jsonl"));
    const release = await lockBlobStore(blobsDir);
    try {
      expect(codeOf(() => forgetReferrers(blobsDir, ["/gone"]))).toBe("STORE_BUSY");
    } finally {
      await release();
    }
    expect(readFileSync(join(blobsDir, ".referrers.jsonl")).equals(before)).toBe(true);
    expect(forgetReferrers(blobsDir, ["/gone"])).toHaveLength(1);
  });
});
