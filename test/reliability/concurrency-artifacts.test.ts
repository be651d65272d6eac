import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { tempDir } from "../support/temp-dir.ts";
import { startArtifactChild } from "../artifacts/helpers/run-child.ts";

const ROUNDS = 150;

/** A churning child (waits for "go"); resolves with the [id, content] pairs it was issued. */
function startChurner(dir: string, label: string) {
  return startArtifactChild<[string, string][]>(["churn", dir, String(ROUNDS), label], label);
}

describe("artifact ids across processes racing saves against cleanup", () => {
  it("two processes saving and clearing one directory are never issued the same id", async () => {
    const dir = join(tempDir("ts-art-race-"), "shared");
    const a = startChurner(dir, "alpha");
    const b = startChurner(dir, "beta");
    await Promise.all([a.ready, b.ready]);
    a.go();
    b.go();
    const issued = [...(await a.done), ...(await b.done)];
    expect(issued).toHaveLength(2 * ROUNDS * 3);

    const owners = new Map<string, string[]>();
    for (const [id, content] of issued) owners.set(id, [...(owners.get(id) ?? []), content]);
    const twice = [...owners].filter(([, contents]) => contents.length > 1);
    console.log(`artifact id race: ${issued.length} saves, ${owners.size} distinct ids, ${twice.length} issued twice`);
    expect(twice).toEqual([]);

    // Whatever survived the other side's cleanup is the content its id was issued for.
    const store = new ArtifactStore(dir, { now: () => 0 });
    for (const ref of store.list()) expect(readFileSync(ref.path, "utf8")).toBe(owners.get(ref.id)![0]);
    const next = store.save("after the race", { toolType: "bash" });
    expect(owners.has(next.id)).toBe(false);
  }, 120_000);
});
