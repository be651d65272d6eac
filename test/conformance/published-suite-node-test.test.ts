import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

/**
 * The published suite is framework-agnostic: node:test (not vitest) runs it against the file tree
 * from the built entry, in a child Node, as a backend author outside this repository would.
 */
describe("transcript-store/conformance under node:test", () => {
  it("runs every behaviour against the file tree and all pass", async () => {
    const entry = join(REPO_ROOT, "dist", "conformance", "index.js");
    expect(existsSync(entry), "dist/ is built by `npm test` (npm run build)").toBe(true);
    const dir = tempDir("ts-conf-node-test-");
    const file = join(dir, "file-tree.test.mjs");
    writeFileSync(
      file,
      [
        'import { mkdtempSync } from "node:fs";',
        'import { tmpdir } from "node:os";',
        'import { join } from "node:path";',
        'import { describe, test } from "node:test";',
        `import { runConformance } from ${JSON.stringify(pathToFileURL(entry).href)};`,
        "runConformance({ describe, test }, {",
        '  name: "file", sessionFiles: true,',
        `  options: async () => ({ root: mkdtempSync(join(${JSON.stringify(dir)}, "store-")) }),`,
        "});",
      ].join("\n"),
    );
    const run = spawnSync(process.execPath, ["--test", "--test-reporter=tap", file], { cwd: dir, encoding: "utf8", timeout: 120_000 });
    const count = (name: string) => Number(new RegExp(`^# ${name} (\\d+)$`, "m").exec(run.stdout)?.[1] ?? Number.NaN);
    const registered: string[] = [];
    const { runConformance } = await import(pathToFileURL(entry).href);
    runConformance({ test: (name: string) => registered.push(name) }, { name: "file", sessionFiles: true, options: async () => ({}) });
    expect(registered.length).toBeGreaterThanOrEqual(19); // the 19 behaviours moved from test/conformance/, and any added since
    expect({ status: run.status, pass: count("pass"), fail: count("fail") }, run.stdout.slice(-3000) + run.stderr).toEqual({
      status: 0,
      pass: registered.length,
      fail: 0,
    });
  });
});
