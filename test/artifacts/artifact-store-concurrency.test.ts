import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { tempDir } from "../support/temp-dir.ts";
import { childContent } from "./helpers/child-content.ts";
import { startArtifactChild } from "./helpers/run-child.ts";

const PER_CHILD = 100;

/** A saver that waits for "go" on stdin, so both children save at the same moment. */
function startSaver(dir: string, label: string) {
  return startArtifactChild<string[]>(["save", dir, String(PER_CHILD), label], label);
}

describe("two processes saving into one directory (acceptance 1)", () => {
  it(`${PER_CHILD} saves each at the same time end with ${2 * PER_CHILD} distinct ids and intact files`, async () => {
    const dir = join(tempDir("ts-art-"), "shared");
    const a = startSaver(dir, "alpha");
    const b = startSaver(dir, "beta");
    await Promise.all([a.ready, b.ready]);
    a.go();
    b.go();
    const [idsA, idsB] = await Promise.all([a.done, b.done]);

    const all = [...idsA, ...idsB];
    // How often consecutive ids went to different children: shows the saves really raced.
    const owner = new Map(all.map((id) => [Number(id), idsA.includes(id) ? "a" : "b"]));
    let switches = 0;
    for (let i = 1; i < all.length; i++) if (owner.get(i) !== owner.get(i - 1)) switches++;
    console.log(`artifact ids: ${all.length} distinct across 2 processes, ${switches} hand-overs between them`);
    expect(new Set(all).size).toBe(2 * PER_CHILD);
    expect(all.map(Number).sort((x, y) => x - y)).toEqual(Array.from({ length: 2 * PER_CHILD }, (_, i) => i));

    const store = new ArtifactStore(dir);
    const refs = store.list();
    expect(refs).toHaveLength(2 * PER_CHILD);
    for (const [label, ids] of [
      ["alpha", idsA],
      ["beta", idsB],
    ] as const) {
      ids.forEach((id, i) => {
        const ref = store.getRef(id)!;
        expect(ref.toolType).toBe(label);
        expect(ref.name).toBe(`${label}-${i}`);
        expect(readFileSync(ref.path, "utf8")).toBe(childContent(label, i));
        expect(store.get(`${label}-${i}`)).toBe(childContent(label, i));
      });
    }
    // nothing half-done left behind: one content file and one metadata file per id, no temp files
    const names = readdirSync(dir);
    expect(names.filter((n) => n.endsWith(".log"))).toHaveLength(2 * PER_CHILD);
    expect(names.filter((n) => n.endsWith(".meta.json"))).toHaveLength(2 * PER_CHILD);
    expect(names).toHaveLength(4 * PER_CHILD);
    expect(store.save("after both", { toolType: "bash" }).id).toBe(String(2 * PER_CHILD));
  }, 120_000);
});
