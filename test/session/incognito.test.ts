import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import type { IncognitoSessionStorage } from "../../src/storage/incognito-session.ts";
import { expectCode } from "../support/error-code.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

/** Every file and directory under `dir`, relative (empty when absent). */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();
}

describe("incognito sessions", () => {
  const b64 = makePng(40, 40, 3).toString("base64");
  const message = {
    role: "user",
    content: [
      { type: "text", text: "incognito secret text" },
      { type: "image", data: b64, mimeType: "image/png" },
    ],
  };

  it("writes nothing under the store root or the blob dir; artifacts live in a temp dir removed on close", async () => {
    const root = tempDir();
    const blobsDir = join(tempDir(), "blobs");
    const sm = await SessionManager.create(join(root, "project"), { root, blobsDir, incognito: true });
    const first = sm.appendMessage(message);
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }] });
    expect(sm.getEntry(first)!.message).toEqual(message);
    const blob = await sm.blobs.put(Buffer.from("blob bytes"));
    expect((await sm.blobs.get(blob.ref))!.toString()).toBe("blob bytes");

    const artifacts = sm.artifacts!;
    const saved = artifacts.save("artifact body", { toolType: "bash" });
    const outputId = artifacts.allocateAgentOutputId("reviewer");
    artifacts.saveAgentOutput(outputId, "# agent output");
    expect(artifacts.read(saved.id)).toBeTruthy();
    const temp = (sm.storage as IncognitoSessionStorage).artifactsTempDir!;
    expect(temp).not.toBeNull();
    expect(temp.startsWith(root)).toBe(false);
    expect(tree(temp).length).toBeGreaterThan(2); // content, meta and the agent output are there while open

    const fork = await sm.fork();
    fork.appendMessage({ role: "user", content: "in the fork" });
    expect(fork.sessionFile).toBeNull();
    await fork.close();
    await sm.close();

    expect(sm.sessionFile).toBeNull();
    expect(tree(root)).toEqual([]);
    expect(existsSync(blobsDir)).toBe(false);
    expect(existsSync(temp)).toBe(false);
    expect(sm.artifacts).toBeNull();
    expect(await sm.blobs.has(blob.ref)).toBe(false);
  });

  it("the same calls without incognito do write (the test above can fail)", async () => {
    const root = tempDir();
    const sm = await SessionManager.create(join(root, "project"), { root });
    sm.appendMessage(message);
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }] });
    await sm.close();
    expect(tree(root).length).toBeGreaterThan(0);
  });

  it.each([
    ["store", { store: "postgres://localhost/x" }],
    ["readOnly", { readOnly: true }],
    ["fsync", { fsync: true }],
    ["a non-boolean", { incognito: "yes" as unknown as boolean }],
  ])("refuses incognito with %s (INVALID_OPTION), writing nothing", async (_name, extra) => {
    const root = tempDir();
    await expectCode(SessionManager.create(join(root, "p"), { root, incognito: true, ...extra }), "INVALID_OPTION");
    expect(tree(root)).toEqual([]);
  });

  it("refuses to open, resume or fork a stored session incognito (INVALID_OPTION)", async () => {
    const root = tempDir();
    const stored = await SessionManager.create(join(root, "p"), { root });
    stored.appendMessage({ role: "user", content: "hi" });
    stored.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }] });
    await stored.close();
    const before = tree(root);
    await expectCode(SessionManager.open(stored.sessionFile!, { root, incognito: true }), "INVALID_OPTION");
    await expectCode(SessionManager.continueRecent(join(root, "p"), { root, incognito: true }), "INVALID_OPTION");
    await expectCode(SessionManager.forkFrom(stored.sessionFile!, join(root, "p"), { root, incognito: true }), "INVALID_OPTION");
    expect(tree(root)).toEqual(before);
  });
});
