import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

interface Manifest {
  repository?: { type?: string; url?: string } | string;
  homepage?: string;
  bugs?: { url?: string } | string;
  keywords?: string[];
  dependencies: Record<string, string>;
  scripts?: Record<string, string>;
}

/** The scripts npm runs when a consumer installs the package (npm 11 warns about each of them). */
const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare"];

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

  it("runs no script when a consumer installs the packed tarball, and builds dist/ itself where a script needs it", () => {
    const packDir = tempDir("ts-pack-manifest-");
    execFileSync(process.platform === "win32" ? "npm.cmd" : "npm", ["pack", "--ignore-scripts", "--pack-destination", packDir], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const tarball = readdirSync(packDir).find((n) => n.endsWith(".tgz"));
    expect(tarball).toBeDefined();
    const packed = JSON.parse(
      execFileSync("tar", ["-xOzf", join(packDir, tarball!), "package/package.json"], { encoding: "utf8" }),
    ) as Manifest;
    expect(Object.keys(packed.scripts ?? {}).filter((name) => INSTALL_SCRIPTS.includes(name))).toEqual([]);
    // npm adds `install: node-gyp rebuild` to a package that ships a binding.gyp
    const listed = execFileSync("tar", ["-tzf", join(packDir, tarball!)], { encoding: "utf8" }).split("\n");
    expect(listed.filter((path) => path.endsWith("binding.gyp"))).toEqual([]);
    // nothing builds dist/ at `npm ci` any more: the quick start's `npm start` and `npm test` (through the
    // fast gate, `npm run check`) build it first
    // (on a Node older than engines they first fetch the pinned Node 22: scripts/engine-node.mjs)
    expect(packed.scripts?.start).toBe("node scripts/engine-node.mjs npm run start:here");
    expect(packed.scripts?.["start:here"]).toMatch(/^npm run build && /);
    expect(packed.scripts?.test).toBe("node scripts/engine-node.mjs npm run test:here");
    expect(packed.scripts?.["test:here"]).toMatch(/^npm run check && /);
    expect(packed.scripts?.check).toMatch(/^npm run build && /);
  });
});
