import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactCipher } from "../../src/artifacts/artifact-cipher.ts";
import type { StoreWarning } from "../../src/errors.ts";
import { rekeySessionFile } from "../../src/maintenance/rekey.ts";
import { keyIdOf } from "../../src/crypto/line-cipher.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { expectCode } from "../support/error-code.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

const storeKey = (key: Buffer) => ({ key, keyId: keyIdOf(key) });
const PNG = makePng(30, 30, 5);
const PNG2 = makePng(31, 17, 6);

async function imageSession(root: string, key: Buffer) {
  const sm = await SessionManager.create(join(root, "p"), { root, encryption: { key } });
  sm.appendMessage({ role: "user", content: [{ type: "image", data: PNG.toString("base64"), mimeType: "image/png" }] });
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "seen" }] });
  sm.appendMessage({ role: "user", content: [{ type: "image", data: PNG2.toString("base64"), mimeType: "image/png" }] });
  const entries = sm.getEntries();
  await sm.close();
  return { path: sm.sessionFile!, entries };
}

const blobNames = (root: string) =>
  readdirSync(join(root, "blobs"))
    .filter((n) => !n.startsWith("."))
    .sort();

/** Every file under the store and its bytes. */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of readdirSync(root, { withFileTypes: true, recursive: true }))
    if (e.isFile()) out.set(join(e.parentPath, e.name), readFileSync(join(e.parentPath, e.name)).toString("base64"));
  return out;
}

describe("rekey of a session with keyed blobs", () => {
  it("stores its images under the new key (new names), renames the refs; the new key reads them, the old blobs stay for gc", async () => {
    const root = tempDir();
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const { path, entries } = await imageSession(root, oldKey);
    const before = blobNames(root);
    expect(before).toHaveLength(2);
    await rekeySessionFile(path, { from: storeKey(oldKey), to: storeKey(newKey), blobsDir: join(root, "blobs") });
    const after = blobNames(root);
    expect(after).toHaveLength(4);
    const added = after.filter((n) => !before.includes(n));
    const raw = readFileSync(path, "utf8");
    for (const name of added) expect(raw).toContain(`blob:hmac-sha256:${name}`);
    for (const name of before) expect(raw).not.toContain(name);
    const warnings: StoreWarning[] = [];
    const reopened = await SessionManager.open(path, { root, encryption: { key: newKey }, onWarning: (w) => warnings.push(w) });
    expect(reopened.getEntries()).toEqual(entries);
    await reopened.close();
    expect(warnings).toEqual([]);
  });

  it("a wrong key, a missing or corrupt keyed blob, or no blobsDir: refused, every file of the store byte-identical", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const { path } = await imageSession(root, key);
    const blobsDir = join(root, "blobs");
    const to = storeKey(randomBytes(32));
    let before = snapshot(root);
    await expectCode(rekeySessionFile(path, { from: storeKey(randomBytes(32)), to, blobsDir }), "DECRYPT_FAILED");
    expect(snapshot(root)).toEqual(before);
    await expectCode(rekeySessionFile(path, { from: storeKey(key), to }), "INVALID_OPTION");
    expect(snapshot(root)).toEqual(before);

    const [first, second] = blobNames(root);
    const good = readFileSync(join(blobsDir, second!));
    writeFileSync(join(blobsDir, second!), Buffer.concat([good.subarray(0, 40), Buffer.from([good[40]! ^ 1]), good.subarray(41)]));
    before = snapshot(root);
    await expectCode(rekeySessionFile(path, { from: storeKey(key), to, blobsDir }), "BLOB_CORRUPT");
    expect(snapshot(root)).toEqual(before);
    writeFileSync(join(blobsDir, second!), good);

    rmSync(join(blobsDir, first!));
    before = snapshot(root);
    await expectCode(rekeySessionFile(path, { from: storeKey(key), to, blobsDir }), "BLOB_MISSING");
    expect(snapshot(root)).toEqual(before);
  });

  it("the CLI rekeys the keyed blobs of the store it is pointed at", async () => {
    const root = tempDir();
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const { path, entries } = await imageSession(root, oldKey);
    writeFileSync(join(root, "old.key"), oldKey.toString("hex"));
    writeFileSync(join(root, "new.key"), newKey.toString("hex"));
    const run = await cli(["rekey", path, "--root", root, "--key-file", join(root, "old.key"), "--new-key-file", join(root, "new.key")]);
    expect(run.code).toBe(0);
    const warnings: StoreWarning[] = [];
    const reopened = await SessionManager.open(path, { root, encryption: { key: newKey }, onWarning: (w) => warnings.push(w) });
    expect(reopened.getEntries()).toEqual(entries);
    await reopened.close();
    expect(warnings).toEqual([]);
  });

  it("covers artifacts and agent outputs: sealed again under the new key; a tampered one refuses the whole rekey", async () => {
    const root = tempDir();
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const sm = await SessionManager.create(join(root, "p"), { root, encryption: { key: oldKey } });
    sm.appendMessage({ role: "user", content: "hi" });
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }] });
    const a = sm.artifacts!.save("artifact text: medlar", { toolType: "bash" });
    const b = sm.artifacts!.save("second: loquat", { toolType: "bash" });
    const agent = sm.artifacts!.allocateAgentOutputId("planner");
    sm.artifacts!.saveAgentOutput(agent, "# plan: sapodilla");
    const dir = sm.artifacts!.dir;
    await sm.close();
    const path = sm.sessionFile!;
    const to = storeKey(newKey);

    const good = readFileSync(b.path);
    writeFileSync(b.path, Buffer.from(good.map((x, i) => (i === 25 ? x ^ 1 : x))));
    const before = snapshot(root);
    await expectCode(rekeySessionFile(path, { from: storeKey(oldKey), to, blobsDir: join(root, "blobs") }), "DECRYPT_FAILED");
    expect(snapshot(root)).toEqual(before);
    writeFileSync(b.path, good);

    // a rekey interrupted after sealing one artifact again: the next one skips it
    const name = a.path.slice(dir.length + 1);
    const id = JSON.parse(readFileSync(path, "utf8").split("\n")[0]!).id as string;
    const plainA = new ArtifactCipher(oldKey, id).open(name, readFileSync(a.path));
    writeFileSync(a.path, new ArtifactCipher(newKey, id).seal(name, plainA));

    const report = await rekeySessionFile(path, { from: storeKey(oldKey), to, blobsDir: join(root, "blobs") });
    expect(report.artifacts).toBe(2);
    const reopened = await SessionManager.open(path, { root, encryption: { key: newKey } });
    expect(reopened.artifacts!.getText(a.id)).toBe("artifact text: medlar");
    expect(reopened.artifacts!.getText(b.id)).toBe("second: loquat");
    expect(reopened.artifacts!.getAgentOutput(agent)).toBe("# plan: sapodilla");
    await reopened.close();
    expect(readdirSync(dir).some((n) => n.includes(".tmp"))).toBe(false);
  });
});
