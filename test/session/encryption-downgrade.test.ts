import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { expectCode } from "../support/error-code.ts";
import { tempDir } from "../support/temp-dir.ts";

/**
 * Downgrade by replacement: an encrypted session file replaced by a plain one of the same id (same
 * path). Returns the path, the key and the plain file's bytes.
 */
async function replacedByPlain(root: string) {
  const key = randomBytes(32);
  const sm = await SessionManager.create(join(root, "project"), { root, encryption: { key } });
  sm.appendMessage({ role: "user", content: "the real, sealed conversation" });
  const path = sm.sessionFile!;
  const id = sm.sessionId;
  await sm.close();
  const header = JSON.parse(readFileSync(path, "utf8").split("\n")[0]!) as Record<string, unknown>;
  delete header.encryption;
  const planted = `${JSON.stringify(header)}\n${JSON.stringify({
    type: "message",
    id: "p1",
    parentId: null,
    timestamp: "2026-01-01T00:00:00.000Z",
    message: { role: "user", content: "planted plain text", timestamp: 1 },
  })}\n`;
  writeFileSync(path, planted);
  return { path, key, id, planted };
}

describe("a plain session put in place of an encrypted one", () => {
  it("with encryption.require: refused (NOT_ENCRYPTED), nothing served, the file left as it is", async () => {
    const root = tempDir();
    const { path, key, planted } = await replacedByPlain(root);
    await expectCode(SessionManager.open(path, { root, encryption: { key, require: true } }), "NOT_ENCRYPTED");
    await expectCode(SessionManager.open(path, { root, readOnly: true, encryption: { key, require: true } }), "NOT_ENCRYPTED");
    expect(readFileSync(path, "utf8")).toBe(planted);
  });

  it("with a key but no require: served, with a PLAIN_SESSION warning", async () => {
    const root = tempDir();
    const { path, key } = await replacedByPlain(root);
    const warnings: StoreWarning[] = [];
    const m = await SessionManager.open(path, { root, readOnly: true, encryption: { key }, onWarning: (w) => warnings.push(w) });
    expect(warnings.map((w) => w.code)).toEqual(["PLAIN_SESSION"]);
    await m.close();
  });

  it("the store-wide setting (config.json encryption.require) refuses it with no option given, and a plain create", async () => {
    const root = tempDir();
    const { path, key } = await replacedByPlain(root);
    writeFileSync(join(root, "config.json"), JSON.stringify({ encryption: { require: true } }));
    await expectCode(SessionManager.open(path, { root, readOnly: true }), "NOT_ENCRYPTED");
    await expectCode(SessionManager.open(path, { root, readOnly: true, encryption: { key } }), "NOT_ENCRYPTED");
    await expectCode(SessionManager.create(join(root, "project"), { root }), "KEY_REQUIRED");
    await expectCode(SessionManager.forkFrom(path, join(root, "fork"), { root }), "NOT_ENCRYPTED");
    // an encrypted session opens as before
    const sm = await SessionManager.create(join(root, "project"), { root, encryption: { key } });
    sm.appendMessage({ role: "user", content: "sealed" });
    await sm.close();
    const again = await SessionManager.open(sm.sessionFile!, { root, encryption: { key } });
    expect(again.getEntries()).toHaveLength(1);
    await again.close();
  });

  it("encryption.require must be a boolean (INVALID_OPTION)", async () => {
    const root = tempDir();
    await expectCode(
      SessionManager.create(join(root, "p"), { root, encryption: { key: randomBytes(32), require: "yes" as unknown as boolean } }),
      "INVALID_OPTION",
    );
  });
});
