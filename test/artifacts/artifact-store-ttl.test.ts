import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { resolveInternalUrl } from "../../src/artifacts/internal-urls.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("TTL with an injected clock (acceptance 6)", () => {
  it("expired artifacts read as null everywhere; cleanupExpired removes exactly them and their files", () => {
    const root = tempDir("ts-art-");
    let now = 10_000;
    const store = new ArtifactStore(join(root, "s"), { now: () => now });
    const short = store.save("short lived", { toolType: "bash", ttlMs: 1_000, name: "short" });
    const long = store.save("long lived ✓", { toolType: "bash", ttlMs: 60_000 });
    const forever = store.save({ keep: true }, { toolType: "json" });
    expect(short.expiresAt).toBe(11_000);
    expect(forever.expiresAt).toBeUndefined();
    expect(store.stats()).toEqual({ artifactCount: 3, totalBytes: 11 + 14 + 13 });

    now = 10_999;
    expect(store.get("0")).toBe("short lived");

    now = 11_000;
    expect(store.get("0")).toBeNull();
    expect(store.get("short")).toBeNull();
    expect(store.get("artifact://0")).toBeNull();
    expect(store.getRef("0")).toBeNull();
    expect(store.getText("0")).toBeNull();
    expect(store.read("0")).toBeNull();
    expect(store.list().map((r) => r.id)).toEqual(["1", "2"]);
    expect(store.stats()).toEqual({ artifactCount: 2, totalBytes: 14 + 13 });
    expect(() => resolveInternalUrl("artifact://0", { session: { artifacts: store } })).toThrow(
      expect.objectContaining({ code: "ARTIFACT_NOT_FOUND", message: "Artifact 0 not found. Available: 1, 2" }),
    );
    // not yet removed from disk: expiry is a read-time rule, cleanup is explicit
    expect(existsSync(short.path)).toBe(true);

    expect(store.cleanupExpired()).toBe(1);
    expect(existsSync(short.path)).toBe(false);
    // the metadata becomes a tombstone that keeps id 0 taken for good
    expect(readFileSync(join(store.dir, "0.meta.json"), "utf8")).toBe('{"v":1,"id":"0","removed":true}\n');
    expect(existsSync(long.path)).toBe(true);
    expect(store.cleanupExpired()).toBe(0);

    now = 70_000;
    expect(store.stats()).toEqual({ artifactCount: 1, totalBytes: 13 });
    expect(store.cleanupExpired()).toBe(1);
    expect(readdirSync(store.dir).sort()).toEqual(["0.meta.json", "1.meta.json", "2.json.log", "2.meta.json"]);
    expect(readFileSync(join(store.dir, "1.meta.json"), "utf8")).toBe('{"v":1,"id":"1","removed":true}\n');
    expect(store.get("2")).toEqual({ keep: true });
  });

  it("expiry survives a restart: a new store with a later clock sees the artifact expired", () => {
    const root = tempDir("ts-art-");
    const dir = join(root, "s");
    new ArtifactStore(dir, { now: () => 1_000 }).save("x", { toolType: "bash", ttlMs: 500 });
    expect(new ArtifactStore(dir, { now: () => 1_499 }).get("0")).toBe("x");
    const later = new ArtifactStore(dir, { now: () => 1_500 });
    expect(later.get("0")).toBeNull();
    expect(later.cleanupExpired()).toBe(1);
    expect(later.save("y", { toolType: "bash" }).id).toBe("1");
  });

  it("an expired alias does not fall back to an older artifact of the same name", () => {
    let now = 0;
    const store = new ArtifactStore(join(tempDir("ts-art-"), "s"), { now: () => now });
    store.save("old", { toolType: "t", name: "n" });
    store.save("new", { toolType: "t", name: "n", ttlMs: 10 });
    now = 5;
    expect(store.get("n")).toBe("new");
    now = 10;
    expect(store.get("n")).toBeNull();
    expect(store.get("0")).toBe("old");
  });

  it("stats bytes are the exact content bytes on disk", () => {
    const store = new ArtifactStore(join(tempDir("ts-art-"), "s"), { now: () => 0 });
    const sizes = [0, 1, 4096, 70_000].map((n) => store.save("é".repeat(n), { toolType: "t" }).sizeBytes);
    expect(sizes).toEqual([0, 2, 8192, 140_000]);
    expect(store.stats()).toEqual({ artifactCount: 4, totalBytes: 148_194 });
  });
});
