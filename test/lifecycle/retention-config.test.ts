import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadRetentionConfig, parseAge, parseSize, RETENTION_ENV } from "../../src/lifecycle/retention-config.ts";
import { Lifecycle } from "../../src/lifecycle/lifecycle.ts";
import { codeOf, expectCode } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("retention config", () => {
  it("no file: the defaults", () => {
    const root = tempDir();
    expect(loadRetentionConfig(root, {})).toEqual({ trash: { retainDays: 30 }, prune: {}, source: null });
  });

  it("reads <root>/config.json, and the env var names another file", () => {
    const root = tempDir();
    writeFileSync(
      join(root, "config.json"),
      JSON.stringify({ trash: { retainDays: 7 }, prune: { olderThan: "30d", maxTotal: "10G", keepLast: 3 } }),
    );
    expect(loadRetentionConfig(root, {})).toEqual({
      trash: { retainDays: 7 },
      prune: { olderThanMs: 30 * 86_400_000, maxTotalBytes: 10 * 1024 ** 3, keepLast: 3 },
      source: join(root, "config.json"),
    });
    const other = join(tempDir(), "retention.json");
    writeFileSync(other, JSON.stringify({ trash: { retainDays: 1 } }));
    expect(loadRetentionConfig(root, { [RETENTION_ENV]: other }).trash.retainDays).toBe(1);
  });

  it.each([
    ["not JSON", "{"],
    ["unknown top key", JSON.stringify({ trsh: {} })],
    ["unknown prune key", JSON.stringify({ prune: { olderthan: "3d" } })],
    ["bad retainDays", JSON.stringify({ trash: { retainDays: -1 } })],
    ["retainDays as text", JSON.stringify({ trash: { retainDays: "30" } })],
    ["bad duration", JSON.stringify({ prune: { olderThan: "30 days" } })],
    ["bad size", JSON.stringify({ prune: { maxTotal: "ten gigs" } })],
    ["bad keepLast", JSON.stringify({ prune: { keepLast: 1.5 } })],
    ["an array", "[]"],
  ])("%s → INVALID_CONFIG", (_name, text) => {
    const root = tempDir();
    writeFileSync(join(root, "config.json"), text);
    expect(codeOf(() => loadRetentionConfig(root, {}))).toBe("INVALID_CONFIG");
  });

  it("an env var naming a missing file is an error, not the defaults", () => {
    expect(codeOf(() => loadRetentionConfig(tempDir(), { [RETENTION_ENV]: join(tempDir(), "absent.json") }))).toBe("INVALID_CONFIG");
  });

  it("a bad config stops purge and prune before anything is touched", async () => {
    const root = tempDir();
    writeFileSync(join(root, "config.json"), JSON.stringify({ trash: { retainDays: "soon" } }));
    const life = Lifecycle.open({ root });
    await expectCode(life.purge(), "INVALID_CONFIG");
    await expectCode(life.prune(), "INVALID_CONFIG");
  });

  it("parses ages and sizes, and refuses what is neither", () => {
    expect(parseAge("2w")).toBe(14 * 86_400_000);
    expect(parseAge("90m")).toBe(90 * 60_000);
    expect(parseAge("30")).toBe(null);
    expect(parseSize("10GiB")).toBe(10 * 1024 ** 3);
    expect(parseSize("500M")).toBe(500 * 1024 ** 2);
    expect(parseSize("4096")).toBe(4096);
    expect(parseSize("1.5k")).toBe(1536);
    expect(parseSize("12 apples")).toBe(null);
  });
});
