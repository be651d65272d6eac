import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ArtifactStore } from "../../src/artifacts/artifact-store.ts";
import { artifactTools } from "../../src/artifacts/artifact-tools.ts";
import type { StoreWarning } from "../../src/errors.ts";
import { resolveInternalUrl } from "../../src/artifacts/internal-urls.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { codeOf } from "../support/error-code.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

const TEXT = "artifact text: the vault code is persimmon-7731\nsecond line persimmon\nthird line";
const JSON_VALUE = { note: "json artifact: quokka-5521", n: 3 };
const STREAMED = ["streamed chunk one: wombat-9914\n", "chunk two wombat\n"];
const OUTPUT = "# Review\n\nagent output: capybara-3317\n";
const MARKERS = ["persimmon", "quokka", "wombat", "capybara", "vault code"];
const PNG = makePng(36, 36, 21);

/** An encrypted session holding a text, a JSON and a streamed artifact and one agent output. */
async function sessionWithArtifacts(root: string, key: Buffer) {
  const sm = await SessionManager.create(join(root, "p"), { root, encryption: { key } });
  sm.appendMessage({ role: "user", content: [{ type: "image", data: PNG.toString("base64"), mimeType: "image/png" }] });
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "hello" }] });
  const store = sm.artifacts!;
  const text = store.save(TEXT, { toolType: "bash", name: "vault" });
  const json = store.save(JSON_VALUE, { toolType: "fetch", summary: "a summary naming quokka" });
  const writer = store.createWriter("bash");
  for (const chunk of STREAMED) writer.write(chunk);
  const streamed = writer.finish();
  const id = store.allocateAgentOutputId("reviewer");
  store.saveAgentOutput(id, OUTPUT);
  return { sm, store, text, json, streamed, agentId: id };
}

function storeFiles(root: string): string[] {
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe("artifacts and agent outputs of an encrypted session (file store)", () => {
  it("are sealed at rest (no plaintext in any file of the store) and read back through every read path", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const { sm, store, text, json, streamed, agentId } = await sessionWithArtifacts(root, key);
    // nothing of the artifacts, the agent output or the image (its bytes or base64) in any file of the store
    const files = storeFiles(root);
    expect(files.some((f) => f.includes(`${join(root, "blobs")}/`))).toBe(true);
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const marker of MARKERS) expect(bytes.includes(marker), `${marker} in ${file}`).toBe(false);
      expect(bytes.includes(PNG.subarray(20, 80)), `image bytes in ${file}`).toBe(false);
      expect(bytes.includes(PNG.toString("base64").slice(30, 110)), `image base64 in ${file}`).toBe(false);
    }
    expect(readFileSync(text.path).subarray(0, 5).toString()).toBe("tsa1\n");
    expect(store.getText(text.id)).toBe(TEXT);
    expect(store.get("vault")).toBe(TEXT);
    expect(store.get(json.uri)).toEqual(JSON_VALUE);
    expect(store.getText(streamed.id)).toBe(STREAMED.join(""));
    expect(store.read(text.id, { offset: 2, limit: 1 })).toMatchObject({ content: "second line persimmon\n", totalLines: 3 });
    expect(store.getAgentOutput(agentId)).toBe(OUTPUT);
    expect(store.readAgentOutput(agentId, { offset: 3, limit: 1 })!.content).toBe("agent output: capybara-3317\n");
    const listed = store.list();
    expect(listed.map((r) => r.sizeBytes)).toEqual([Buffer.byteLength(TEXT), Buffer.byteLength(JSON.stringify(JSON_VALUE)), 49]);
    expect(listed[0]!.summary).toContain("persimmon");
    // the model tools and internal URLs read through decryption
    const [getArtifact, listArtifacts] = artifactTools(store);
    expect(await getArtifact!.execute({ pointerOrName: text.uri })).toBe(TEXT);
    expect(JSON.stringify(await listArtifacts!.execute({}))).toContain("wombat");
    const session = { artifacts: store };
    expect(resolveInternalUrl(`${text.uri}`, { session }).content).toContain("persimmon-7731");
    expect(resolveInternalUrl(`agent://${agentId}`, { session }).content).toBe(OUTPUT);
    await sm.close();

    const reopened = await SessionManager.open(sm.sessionFile!, { root, encryption: { key } });
    expect(reopened.artifacts!.getText(text.id)).toBe(TEXT);
    expect(reopened.artifacts!.getAgentOutput(agentId)).toBe(OUTPUT);
    await reopened.close();
  });

  it("a tampered, swapped, renamed or clear file is DECRYPT_FAILED: nothing of it is served", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const { sm, store, text, streamed, agentId } = await sessionWithArtifacts(root, key);
    const good = readFileSync(text.path);
    const otherGood = readFileSync(streamed.path);
    writeFileSync(text.path, Buffer.from(good.map((b, i) => (i === 30 ? b ^ 1 : b))));
    expect(codeOf(() => store.getText(text.id))).toBe("DECRYPT_FAILED");
    expect(codeOf(() => store.read(text.id))).toBe("DECRYPT_FAILED");
    // a listing reads leniently: the damaged one lists without a summary, reported once
    const warnings: StoreWarning[] = [];
    const lenient = new ArtifactStore(store.dir, { cipher: store.cipher, onWarning: (w) => warnings.push(w) });
    expect(lenient.list().map((r) => r.summary)).toEqual(["", expect.stringContaining("quokka"), expect.stringContaining("wombat")]);
    expect(warnings.map((w) => w.code)).toEqual(["DECRYPT_FAILED"]);
    writeFileSync(text.path, otherGood); // another artifact's sealed bytes under this name
    expect(codeOf(() => store.get(text.id))).toBe("DECRYPT_FAILED");
    writeFileSync(text.path, TEXT); // written in clear by someone else
    expect(codeOf(() => store.getText(text.id))).toBe("DECRYPT_FAILED");
    writeFileSync(text.path, good);
    expect(store.getText(text.id)).toBe(TEXT);
    const md = join(store.dir, `${agentId}.md`);
    renameSync(md, join(store.dir, "other.md"));
    expect(codeOf(() => store.getAgentOutput("other"))).toBe("DECRYPT_FAILED");
    expect(codeOf(() => store.readAgentOutput("other"))).toBe("DECRYPT_FAILED");
    await sm.close();
  });

  it("allocate (written in clear by its caller) is refused; a fork reads its copies (sealed again), the source its own", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const { sm, store, text, agentId } = await sessionWithArtifacts(root, key);
    expect(codeOf(() => store.allocate("bash"))).toBe("INVALID_OPTION");
    await sm.close();
    const fork = await SessionManager.forkFrom(sm.sessionFile!, join(root, "p"), { root, encryption: { key } });
    expect(fork.artifacts!.getText(text.id)).toBe(TEXT);
    expect(fork.artifacts!.getAgentOutput(agentId)).toBe(OUTPUT);
    await fork.close();
    const source = await SessionManager.open(sm.sessionFile!, { root, encryption: { key }, readOnly: true });
    expect(source.artifacts!.getText(text.id)).toBe(TEXT);
    await source.close();
    for (const file of storeFiles(root)) for (const marker of MARKERS) expect(readFileSync(file, "utf8").includes(marker)).toBe(false);
  });
});
