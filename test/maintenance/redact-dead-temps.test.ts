import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

/*
 * Outside review of issue 32 (exposure after redact): a rewrite killed mid-way (migrate --in-place,
 * inline-images) leaves its temp file beside the session, holding the transcript as it was, secrets
 * included. `redact` removes a dead process's temps of the session it scrubs, whether or not the
 * session has an artifacts directory.
 */

const GH = "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";

describe("redact removes a killed rewrite's temp file beside a session without artifacts", () => {
  it("no byte of the secret stays beside the session", async () => {
    const root = tempDir("ts-redact-temps-");
    const sm = await SessionManager.create(join(root, "proj"), { root });
    sm.appendMessage({ role: "user", content: `push with ${GH}` });
    await sm.close();
    const file = sm.sessionFile!;
    expect(existsSync(file.replace(/\.jsonl$/, ""))).toBe(false); // no artifacts directory
    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    const temp = join(dirname(file), `.${basename(file)}.${dead}.0123456789ab.tmp`);
    writeFileSync(temp, readFileSync(file), { mode: 0o600 });

    const out = await cli(["--root", root, "redact", sm.sessionId, "--json"]);
    expect(out.code, out.stderr).toBe(0);
    const holding = readdirSync(dirname(file)).filter((n) => readFileSync(join(dirname(file), n), "latin1").includes(GH));
    expect(holding).toEqual([]);
  });
});
