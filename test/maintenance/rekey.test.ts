import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rekeySessionFile } from "../../src/maintenance/rekey.ts";
import { keyIdOf } from "../../src/crypto/line-cipher.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { expectCode } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";

const storeKey = (key: Buffer) => ({ key, keyId: keyIdOf(key) });

async function session(root: string, options: { encryption?: { key: Buffer } }) {
  const sm = await SessionManager.create(join(root, "p"), { root, ...options });
  sm.appendMessage({ role: "user", content: "rekey me: marmalade" });
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok marmalade" }] });
  const entries = sm.getEntries();
  await sm.close();
  return { path: sm.sessionFile!, entries };
}

describe("rekeySessionFile", () => {
  it("re-encrypts under the new key: the old key is refused afterwards, the new one reads the same entries", async () => {
    const root = tempDir();
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const { path, entries } = await session(root, { encryption: { key: oldKey } });
    const report = await rekeySessionFile(path, { from: storeKey(oldKey), to: storeKey(newKey) });
    expect(report).toMatchObject({ entries: 2, fromKeyId: keyIdOf(oldKey), toKeyId: keyIdOf(newKey) });
    expect(readFileSync(path, "utf8")).not.toContain("marmalade");
    expect(JSON.parse(readFileSync(path, "utf8").split("\n")[0]!).encryption.keyId).toBe(keyIdOf(newKey));
    await expectCode(SessionManager.open(path, { root, encryption: { key: oldKey } }), "DECRYPT_FAILED");
    const reopened = await SessionManager.open(path, { root, encryption: { key: newKey } });
    expect(reopened.getEntries()).toEqual(entries);
    reopened.appendMessage({ role: "user", content: "after rekey" });
    await reopened.close();
  });

  it("a wrong current key, a plain session and a live writer are refused with the file byte-identical", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const encrypted = await session(root, { encryption: { key } });
    const before = readFileSync(encrypted.path);
    await expectCode(
      rekeySessionFile(encrypted.path, { from: storeKey(randomBytes(32)), to: storeKey(randomBytes(32)) }),
      "DECRYPT_FAILED",
    );
    expect(readFileSync(encrypted.path).equals(before)).toBe(true);

    const writer = await SessionManager.open(encrypted.path, { root, encryption: { key } });
    await expectCode(rekeySessionFile(encrypted.path, { from: storeKey(key), to: storeKey(randomBytes(32)) }), "SESSION_LOCKED");
    await writer.close();
    expect(readFileSync(encrypted.path).equals(before)).toBe(true);

    const plain = await session(tempDir(), {});
    const plainBefore = readFileSync(plain.path);
    await expectCode(rekeySessionFile(plain.path, { from: storeKey(key), to: storeKey(randomBytes(32)) }), "INVALID_OPTION");
    expect(readFileSync(plain.path).equals(plainBefore)).toBe(true);
  });
});
