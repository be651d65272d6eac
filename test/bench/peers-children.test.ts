import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runPeer } from "../../bench/peers/spawn.ts";
import {
  CWD,
  w1Messages,
  w2Entries,
  writeBlobRefSession,
  writeBucket,
  writeImageSession,
  writeTextSession,
} from "../../bench/peers/workloads.ts";
import { cwdBucket } from "../../src/session/paths.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ts-peers-test-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const lines = (path: string) =>
  readFileSync(path, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("bench:peers workloads", () => {
  it("are seeded: the same messages every time, ~9 KB on average for W1, a 300 KB base64 image for W2", () => {
    expect(JSON.stringify(w1Messages(30))).toBe(JSON.stringify(w1Messages(30)));
    const bytes = w1Messages(300).map((m) => JSON.stringify(m).length);
    const mean = bytes.reduce((a, b) => a + b, 0) / bytes.length;
    expect(mean).toBeGreaterThan(8000);
    expect(mean).toBeLessThan(10_000);
    const { images, texts } = w2Entries(3);
    const data = images.map((m) => (m.content as { data?: string }[])[1]!.data!);
    expect(data.map((d) => d.length)).toEqual([300_000, 300_000, 300_000]);
    expect(new Set(data).size).toBe(3);
    expect(Buffer.from(data[0]!, "base64").subarray(1, 4).toString()).toBe("PNG");
    expect(JSON.stringify(texts[0]).length).toBeLessThan(200);
  });

  it("write v3 sessions whose entries chain by parentId, with and without inline images", () => {
    writeTextSession(join(dir, "t.jsonl"), 200_000, 31);
    writeImageSession(join(dir, "i.jsonl"), 6_000_000, 41);
    for (const file of ["t.jsonl", "i.jsonl"]) {
      const [header, ...entries] = lines(join(dir, file));
      expect(header).toMatchObject({ type: "session", version: 3, cwd: CWD });
      expect(entries.map((e) => e.parentId)).toEqual([null, ...entries.slice(0, -1).map((e) => e.id)]);
      const assistant = entries.find((e) => e.message.role === "assistant");
      expect(assistant.message.usage.cost.total).toBeGreaterThan(0); // omp sums it on load
    }
    const images = lines(join(dir, "i.jsonl")).filter((e) => e.message?.content?.[1]?.type === "image");
    expect(images.length).toBeGreaterThan(1);
  });

  it("W4b externalizes every image of the W4 session into a blob file named by its sha256, the rest unchanged", () => {
    writeImageSession(join(dir, "i.jsonl"), 4_000_000, 41);
    writeBlobRefSession(join(dir, "i.jsonl"), join(dir, "r.jsonl"), join(dir, "blobs"));
    const inline = lines(join(dir, "i.jsonl"));
    const refs = lines(join(dir, "r.jsonl"));
    expect(refs).toHaveLength(inline.length);
    let images = 0;
    for (const [i, record] of refs.entries()) {
      const block = record.message?.content?.[1];
      if (block?.type !== "image") {
        expect(record).toEqual(inline[i]);
        continue;
      }
      images++;
      const bytes = readFileSync(join(dir, "blobs", block.data.slice("blob:sha256:".length)));
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(block.data.slice("blob:sha256:".length));
      expect(bytes.toString("base64")).toBe(inline[i].message.content[1].data);
    }
    expect(images).toBeGreaterThan(1);
    expect(readdirSync(join(dir, "blobs"))).toHaveLength(images);
  });

  it("write one bucket of small sessions", () => {
    writeBucket(join(dir, "b"), 5);
    const names = readdirSync(join(dir, "b"));
    expect(names).toHaveLength(5);
    expect(lines(join(dir, "b", names[0]!))).toHaveLength(7);
  });
});

describe("bench:peers children", () => {
  it("raw Node and us answer a W1 job with a duration, after the appends reached the file", async () => {
    for (const impl of ["raw", "us"] as const) {
      const work = mkdtempSync(join(dir, `${impl}-`));
      const result = await runPeer(impl, { workload: "W1", work, count: 12 });
      expect(result.failed).toBeUndefined();
      expect(result.ms).toBeGreaterThan(0);
      expect(result.rssMB).toBeGreaterThan(0);
    }
  });

  it("raw Node and us open the W4b session eagerly and load the same number of entries", async () => {
    writeImageSession(join(dir, "i.jsonl"), 4_000_000, 41);
    writeBlobRefSession(join(dir, "i.jsonl"), join(dir, "r.jsonl"), join(dir, "blobs"));
    const entries = lines(join(dir, "r.jsonl")).length - 1;
    for (const impl of ["raw", "us"] as const) {
      const work = mkdtempSync(join(dir, `${impl}-`));
      const result = await runPeer(impl, { workload: "W4B", work, count: 0, source: join(dir, "r.jsonl"), blobs: join(dir, "blobs") });
      expect(result.failed).toBeUndefined();
      expect(result.entries).toBe(entries);
    }
  });

  it("raw Node and us list the same bucket and fork with artifacts; a wrong count fails the child", async () => {
    const bucket = join(dir, "w5", cwdBucket(CWD, "omp"));
    writeBucket(bucket, 6);
    for (const impl of ["raw", "us"] as const) {
      const listed = await runPeer(impl, { workload: "W5", work: mkdtempSync(join(dir, "l-")), count: 6, source: bucket });
      expect(listed.failed).toBeUndefined();
      const wrong = await runPeer(impl, { workload: "W5", work: mkdtempSync(join(dir, "l-")), count: 7, source: bucket });
      expect(wrong.failed).toMatch(/listed 6 of 7/);
      const forked = await runPeer(impl, { workload: "W6-artifacts", work: mkdtempSync(join(dir, "f-")), count: 3 });
      expect(forked.failed).toBeUndefined();
      expect(forked.ms).toBeGreaterThan(0);
    }
  });
});
