import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";
import { childContent } from "./helpers/child-content.ts";
import { ARTIFACT_CHILD } from "./helpers/run-child.ts";

const PER_CHILD = 100;

interface Saver {
  child: ChildProcess;
  ready: Promise<void>;
  done: Promise<string[]>;
}

/** Starts a saver that waits for "go" on stdin, so both children save at the same moment. */
function startSaver(dir: string, label: string): Saver {
  const child = spawn(process.execPath, ["--import", "tsx", ARTIFACT_CHILD, "save", dir, String(PER_CHILD), label], {
    cwd: REPO_ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let markReady: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (d: string) => {
    stdout += d;
    if (stdout.startsWith("ready\n")) markReady();
  });
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<string[]>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`child ${label} exited ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout.slice("ready\n".length)) as string[]);
    });
  });
  return { child, ready, done };
}

describe("two processes saving into one directory (acceptance 1)", () => {
  it(`${PER_CHILD} saves each at the same time end with ${2 * PER_CHILD} distinct ids and intact files`, async () => {
    const dir = join(tempDir("ts-art-"), "shared");
    const a = startSaver(dir, "alpha");
    const b = startSaver(dir, "beta");
    await Promise.all([a.ready, b.ready]);
    a.child.stdin!.end("go\n");
    b.child.stdin!.end("go\n");
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
