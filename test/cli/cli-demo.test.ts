import { describe, expect, it } from "vitest";
import { cli } from "../support/cli.ts";

describe("transcript-store demo (npm start)", () => {
  it("migrates, verifies, resumes, forks, moves and gc's the fixtures and prints the before/after table", async () => {
    const run = await cli(["demo"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/file\s+from\s+before\s+after\s+images\s+blobs new\/dedup\s+status/);
    expect(run.stdout).toContain("v1-pi-legacy-with-images.jsonl");
    expect(run.stdout).toMatch(/3\. verify after: 9 file\(s\), 0 finding\(s\)/);
    expect(run.stdout).toMatch(/forked it as/);
    expect(run.stdout).not.toMatch(/failed|Error/);
    const json = await cli(["demo", "--json"]);
    const record = JSON.parse(json.stdout.trim().split("\n").at(-1)!);
    expect(record).toMatchObject({ type: "demo", findingsAfter: 0 });
    expect(record.files.every((f: { status: string }) => f.status === "imported")).toBe(true);
  });
});
