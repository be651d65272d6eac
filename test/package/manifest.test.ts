import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child.ts";

interface Manifest {
  repository?: { type?: string; url?: string } | string;
  homepage?: string;
  bugs?: { url?: string } | string;
  keywords?: string[];
  dependencies: Record<string, string>;
}

const manifest = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as Manifest;

describe("package.json", () => {
  it("says where the code, the docs and the issue tracker are, and what the package is about", () => {
    // the object form: npm publish rewrites a shorthand and warns about it
    expect(manifest.repository).toEqual({ type: "git", url: "git+https://github.com/transcript-store/transcript-store.git" });
    expect(manifest.homepage).toBe("https://github.com/transcript-store/transcript-store#readme");
    expect(manifest.bugs).toEqual({ url: "https://github.com/transcript-store/transcript-store/issues" });
    expect(manifest.keywords).toEqual(expect.arrayContaining(["jsonl", "transcript", "session", "coding-agent", "postgresql"]));
    expect(new Set(manifest.keywords).size).toBe(manifest.keywords!.length);
  });

  it("installs no type package into consumers (the declarations need none but the consumer's @types/node)", () => {
    expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith("@types/"))).toEqual([]);
  });
});
