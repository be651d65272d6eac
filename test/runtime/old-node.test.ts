import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { requiredNode, satisfies } from "../../bin/node-engine.mjs";

const REPO = join(import.meta.dirname, "../..");

/**
 * A Node on this machine older than `engines` (`which -a node`: Debian's 20 here), or null: then the
 * tests skip with one loud line, except under CI=true, whose machine runs .ci/run on its own older Node.
 */
function oldNode(): string | null {
  const found = spawnSync("which", ["-a", "node"], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
  for (const node of ["/usr/bin/node", ...found]) {
    if (!existsSync(node)) continue;
    const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
    if (version !== "" && !satisfies(version, requiredNode())) return node;
  }
  if (process.env.CI === "true" || process.env.CI === "1") throw new Error("CI=true but no Node older than engines to test on");
  console.warn("SKIPPED: no Node older than engines on this machine; the old-Node tests did not run");
  return null;
}

const node = oldNode();
/** PATH with the old Node's directory first (no pinned Node on it). */
const oldPath = node === null ? "" : `${join(node, "..")}:/usr/bin:/bin`;

describe.skipIf(node === null)("on a Node older than engines (issue 36 #15)", () => {
  it("the CLI stops at once with one line naming the Node it needs", () => {
    const run = spawnSync(node!, [join(REPO, "bin/transcript-store.mjs"), "ls"], { encoding: "utf8", env: { PATH: oldPath } });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(
      /^transcript-store: needs Node >=22\.19 \(this is Node v\d+\.\d+\.\d+\); see the README's Supported runtimes\n$/,
    );
  });

  it("npm start and npm test run their command on the pinned Node 22 of .ci/runtimes, said in one line", () => {
    // .ci/run installs the pinned runtimes first; a checkout without them would fetch Node 22 here (not in a test).
    if (!existsSync(join(REPO, ".ci/runtimes/node_modules/node22/bin/node"))) {
      if (process.env.CI === "true") throw new Error("CI=true but .ci/runtimes holds no Node 22");
      console.warn("SKIPPED: .ci/runtimes/node_modules/node22 not installed here");
      return;
    }
    const run = spawnSync(node!, [join(REPO, "scripts/engine-node.mjs"), "node", "-p", "process.version"], {
      encoding: "utf8",
      env: { PATH: oldPath },
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("v22.23.3\n");
    expect(run.stderr).toMatch(
      /^Node v\d+\.\d+\.\d+ is older than engines >=22\.19: running on the pinned Node 22\.23\.3 of \.ci\/runtimes\n$/,
    );
    const scripts = JSON.parse(
      spawnSync(node!, ["-p", "JSON.stringify(require('./package.json').scripts)"], { cwd: REPO, encoding: "utf8" }).stdout,
    ) as Record<string, string>;
    expect(scripts.start).toBe("node scripts/engine-node.mjs npm run start:here");
    expect(scripts.test).toBe("node scripts/engine-node.mjs npm run test:here");
  });
});
