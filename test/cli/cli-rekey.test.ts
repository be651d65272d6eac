import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("transcript-store rekey", () => {
  it("re-encrypts under the new key file; a wrong key file fails with DECRYPT_FAILED and the file untouched", async () => {
    const root = tempDir();
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const sm = await SessionManager.create(join(root, "p"), { root, encryption: { key: oldKey } });
    sm.appendMessage({ role: "user", content: "quince" });
    const entries = sm.getEntries();
    await sm.close();
    const path = sm.sessionFile!;
    const oldFile = join(root, "old.key");
    const newFile = join(root, "new.key");
    writeFileSync(oldFile, `${oldKey.toString("hex")}\n`);
    writeFileSync(newFile, newKey);

    const wrong = join(root, "wrong.key");
    writeFileSync(wrong, randomBytes(32));
    const before = readFileSync(path);
    const failed = await cli(["rekey", path, "--key-file", wrong, "--new-key-file", newFile, "--root", root]);
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toContain("DECRYPT_FAILED");
    expect(readFileSync(path).equals(before)).toBe(true);

    const run = await cli(["rekey", path, "--key-file", oldFile, "--new-key-file", newFile, "--root", root, "--json"]);
    expect(run.code).toBe(0);
    expect(run.records).toEqual([expect.objectContaining({ type: "rekeyed", path, entries: 1 })]);
    const reopened = await SessionManager.open(path, { root, encryption: { key: newKey }, readOnly: true });
    expect(reopened.getEntries()).toEqual(entries);
    await reopened.close();
    expect(readFileSync(path, "utf8")).not.toContain("quince");
  });
});
