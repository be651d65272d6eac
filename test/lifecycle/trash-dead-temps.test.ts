import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { Lifecycle } from "../../src/lifecycle/lifecycle.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { tempDir } from "../support/temp-dir.ts";

/*
 * Outside review of issue 32 (exposure after rm + purge): a rewrite of a session file (migrate
 * --in-place, inline-images, redact, rekey) killed mid-way leaves its temp file beside the session,
 * `.<name>.<pid>.<random>.tmp`, holding the whole transcript. `rm` takes it along with the session
 * (it is the session's), so `purge` leaves no byte of the purged session in the sessions tree.
 */

const WORD = "zanzibarquokkaplatypus";

/** Every file under `dir` whose bytes hold `needle`. */
function holding(dir: string, needle: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...holding(path, needle));
    else if (readFileSync(path, "latin1").includes(needle)) out.push(path);
  }
  return out;
}

describe("a killed rewrite's temp file beside a session goes with it to the trash", () => {
  it("rm + purge leaves no byte of the session in the sessions tree", async () => {
    const root = tempDir("ts-trash-temps-");
    const sm = await SessionManager.create(join(root, "proj"), { root });
    sm.appendMessage({ role: "user", content: `the word is ${WORD}` });
    await sm.close();
    const file = sm.sessionFile!;
    // the temp a killed rewrite (a process that no longer runs) left: the whole session's bytes
    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    const temp = join(dirname(file), `.${basename(file)}.${dead}.0123456789ab.tmp`);
    writeFileSync(temp, readFileSync(file), { mode: 0o600 });

    const life = Lifecycle.open({ root });
    await life.rm(sm.sessionId);
    await life.purge({ all: true });
    expect(holding(join(root, "sessions"), WORD)).toEqual([]);
    expect(holding(root, WORD)).toEqual([]);
  });
});
