import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

/*
 * Outside review of issue 32 (acceptance 3: "redact over a store holding an encrypted session exits
 * 1 with KEY_REQUIRED"): an encrypted session file is reported `encrypted` and not scanned, as on
 * PostgreSQL (its lines are ciphertext); `redact` over the whole store scrubs the rest and succeeds.
 */

const GH = "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";

function filesHolding(dir: string, needle: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesHolding(p, needle));
    else if (readFileSync(p).includes(needle)) out.push(p);
  }
  return out;
}

describe("redact over a file store holding an encrypted session", () => {
  it("reports it encrypted (not failed), redacts the others, exits 0", async () => {
    const root = tempDir("ts-redact-enc-");
    const sealed = await SessionManager.create(join(root, "a"), { root, encryption: { key: randomBytes(32) } });
    sealed.appendMessage({ role: "user", content: "sealed words" });
    await sealed.close();
    const leaky = await SessionManager.create(join(root, "b"), { root });
    leaky.appendMessage({ role: "user", content: `push with ${GH}` });
    await leaky.close();
    const sealedBytes = readFileSync(sealed.sessionFile!);

    const run = await cli(["redact", "--root", root, "--json"]);
    expect([run.code, run.stderr]).toEqual([0, ""]);
    const files = run.records.filter((r) => r.type === "file");
    expect(files.find((r) => r.source === sealed.sessionFile)).toMatchObject({ status: "encrypted" });
    expect(files.find((r) => r.source === leaky.sessionFile)).toMatchObject({ status: "migrated" });
    expect(run.records.find((r) => r.type === "totals")).toMatchObject({ failed: 0, rewritten: 1 });
    expect(filesHolding(root, GH)).toEqual([]);
    expect(readFileSync(sealed.sessionFile!)).toEqual(sealedBytes);
  });
});
