import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BlobStore } from "../../src/blob/blob-store.ts";
import { KeyedBlobCipher } from "../../src/blob/keyed-blob-cipher.ts";
import { KeyedBlobs } from "../../src/blob/keyed-blobs.ts";
import type { StoreWarning } from "../../src/errors.ts";
import { collectGarbage } from "../../src/maintenance/gc.ts";
import { verifySessionFile } from "../../src/maintenance/verify.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { onLines, spawnTs } from "../support/child.ts";
import { cli } from "../support/cli.ts";
import { codeOf, expectCode } from "../support/error-code.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

const PNG = makePng(48, 48, 11);
const PNG_B64 = PNG.toString("base64");
const image = (data = PNG_B64) => ({
  role: "user" as const,
  content: [
    { type: "text" as const, text: "look" },
    { type: "image" as const, data, mimeType: "image/png" },
  ],
});

async function sessionWithImage(root: string, key: Buffer, data = PNG_B64) {
  const sm = await SessionManager.create(join(root, "project"), { root, encryption: { key } });
  sm.appendMessage(image(data));
  sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "a square" }] });
  const entries = sm.getEntries();
  await sm.close();
  return { path: sm.sessionFile!, entries };
}

const blobNames = (root: string) => readdirSync(join(root, "blobs")).filter((n) => !n.startsWith("."));

/** Every regular file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe("keyed blobs of an encrypted session (file store)", () => {
  it("an image goes to one keyed blob: its name is not the sha256, no image bytes anywhere in the store; open reads it back", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const { path, entries } = await sessionWithImage(root, key);
    const names = blobNames(root);
    expect(names).toHaveLength(1);
    expect(names[0]).not.toBe(createHash("sha256").update(PNG).digest("hex"));
    const raw = readFileSync(path, "utf8");
    expect(raw).toContain(`"blobs":["blob:hmac-sha256:${names[0]}"]`);
    expect(raw).not.toContain("blob:sha256:");
    // neither the image bytes nor their base64 (nor a slice of either) is in any file of the store
    for (const file of filesUnder(root)) {
      const bytes = readFileSync(file);
      expect(bytes.includes(PNG.subarray(16, 80)), file).toBe(false);
      expect(bytes.includes(PNG_B64.slice(40, 120)), file).toBe(false);
    }
    const keyed = readFileSync(join(root, "blobs", names[0]!));
    expect(keyed.subarray(0, 6).toString()).toBe("tskb1\n");
    expect(keyed.length).toBe(6 + PNG.length + 16);

    const warnings: StoreWarning[] = [];
    const reopened = await SessionManager.open(path, { root, encryption: { key }, onWarning: (w) => warnings.push(w) });
    expect(reopened.getEntries()).toEqual(entries);
    expect(JSON.stringify(reopened.getEntries())).toContain(PNG_B64);
    await reopened.close();
    expect(warnings).toEqual([]);
  });

  it("the same image in two sessions of one store is one file; under another key it is another ref", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    await sessionWithImage(root, key);
    const first = blobNames(root);
    const before = statSync(join(root, "blobs", first[0]!));
    await sessionWithImage(root, key);
    expect(blobNames(root)).toEqual(first);
    expect(statSync(join(root, "blobs", first[0]!)).ino).toBe(before.ino); // proven intact, not rewritten
    await sessionWithImage(root, randomBytes(32));
    expect(blobNames(root)).toHaveLength(2);
  });

  it("a tampered, truncated or swapped keyed blob is BLOB_CORRUPT: never served, the ref kept, a coded warning", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const { path } = await sessionWithImage(root, key);
    const other = makePng(20, 20, 3);
    await sessionWithImage(root, key, other.toString("base64"));
    const [a, b] = blobNames(root);
    const store = new BlobStore(join(root, "blobs"));
    const keyed = new KeyedBlobs(store, new KeyedBlobCipher(key));
    const first = readFileSync(path, "utf8").includes(a!) ? a! : b!;
    const second = first === a ? b! : a!;
    const file = join(root, "blobs", first);
    const good = readFileSync(file);

    const attempts: Array<[string, () => void]> = [
      ["flipped byte", () => writeFileSync(file, Buffer.from(good.map((x, i) => (i === 100 ? x ^ 1 : x))))],
      ["truncated", () => writeFileSync(file, good.subarray(0, good.length - 1))],
      ["swapped", () => writeFileSync(file, readFileSync(join(root, "blobs", second)))],
      ["another key", () => writeFileSync(file, new KeyedBlobCipher(randomBytes(32)).seal(first, PNG))],
      ["plain bytes", () => writeFileSync(file, PNG)],
    ];
    for (const [what, damage] of attempts) {
      damage();
      expect(
        codeOf(() => new KeyedBlobs(new BlobStore(join(root, "blobs")), new KeyedBlobCipher(key)).getSync(first)),
        what,
      ).toBe("BLOB_CORRUPT");
      const warnings: StoreWarning[] = [];
      const sm = await SessionManager.open(path, { root, encryption: { key }, readOnly: true, onWarning: (w) => warnings.push(w) });
      const text = JSON.stringify(sm.getEntries());
      await sm.close();
      expect(text, what).not.toContain(PNG_B64);
      expect(text, what).toContain(`blob:hmac-sha256:${first}`);
      expect(
        warnings.map((w) => w.code),
        what,
      ).toEqual(["BLOB_CORRUPT"]);
      writeFileSync(file, good);
    }
    expect(keyed.getSync(first)!.equals(PNG)).toBe(true);
  });

  it("an edited clear blob list is DECRYPT_FAILED and nothing is written", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const { path } = await sessionWithImage(root, key);
    const [name] = blobNames(root);
    const original = readFileSync(path, "utf8");
    for (const forged of [
      original.replace(`"blobs":["blob:hmac-sha256:${name}"]`, `"blobs":[]`),
      original.replace(`,"blobs":["blob:hmac-sha256:${name}"]`, ""),
      original.replace(`blob:hmac-sha256:${name}`, `blob:hmac-sha256:${"0".repeat(64)}`),
    ]) {
      expect(forged).not.toBe(original);
      writeFileSync(path, forged);
      await expectCode(SessionManager.open(path, { root, encryption: { key } }), "DECRYPT_FAILED");
      expect(readFileSync(path, "utf8")).toBe(forged);
    }
  });

  it("gc (no key) keeps a keyed blob while an encrypted session lists it, and collects it once none does", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const { path } = await sessionWithImage(root, key);
    const [name] = blobNames(root);
    const gc = () => collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: join(root, "blobs"), graceMs: 0 });
    const kept = await gc();
    expect(kept.deleted).toEqual([]);
    expect(kept.referenced).toBe(1);
    expect(blobNames(root)).toEqual([name]);
    rmSync(path);
    const swept = await gc();
    expect(swept.deleted).toEqual([name]);
    expect(blobNames(root)).toEqual([]);
  });

  it("verify without the key checks that keyed blobs are present and sealed, and says what it could not check", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const { path } = await sessionWithImage(root, key);
    const [name] = blobNames(root);
    const blobsDir = join(root, "blobs");
    const clean = verifySessionFile(path, { blobsDir });
    expect(clean.findings).toEqual([]);
    expect(clean.entries).toBe(2);
    expect(clean.unchecked).toMatch(/encrypted/);
    writeFileSync(join(blobsDir, name!), PNG); // not a keyed blob file at all
    expect(verifySessionFile(path, { blobsDir }).findings.map((f) => f.kind)).toEqual(["BLOB_CORRUPT"]);
    renameSync(join(blobsDir, name!), join(blobsDir, "gone"));
    expect(verifySessionFile(path, { blobsDir }).findings.map((f) => f.kind)).toEqual(["BLOB_MISSING"]);
  });

  it("SIGKILL of a child mid-append of images: nothing acknowledged lost, every keyed ref has its blob, none in clear", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const { path } = await sessionWithImage(root, key);
    const child = join(import.meta.dirname, "helpers/encrypted-image-writer-child.ts");
    const acknowledged: string[] = [];
    for (let round = 0; round < 3; round++) {
      const proc = spawnTs(child, [path, root, key.toString("hex"), String(round)]);
      let stderr = "";
      proc.stderr!.on("data", (d) => (stderr += d));
      await new Promise<void>((resolve, reject) => {
        let seen = 0;
        onLines(proc, (line) => {
          if (line.startsWith("ready")) return;
          acknowledged.push(line);
          if (++seen === 15 + round * 11) proc.kill("SIGKILL");
        });
        proc.on("exit", (_c, signal) => (signal === "SIGKILL" ? resolve() : reject(new Error(`child exited on its own: ${stderr}`))));
      });
      const past = new Date(Date.now() - 60_000);
      if (existsSync(`${path}.lock`)) utimesSync(`${path}.lock`, past, past);
      const warnings: StoreWarning[] = [];
      const reopened = await SessionManager.open(path, {
        root,
        encryption: { key },
        lockStaleMs: 2000,
        onWarning: (w) => warnings.push(w),
      });
      const byId = new Map(reopened.getEntries().map((e) => [e.id, e]));
      for (const id of acknowledged) {
        expect(byId.has(id), `round ${round}: ${id} lost`).toBe(true);
        expect(JSON.stringify(byId.get(id)), `round ${round}: ${id} not rehydrated`).not.toContain("blob:");
      }
      expect(warnings.filter((w) => w.code !== "TORN_TAIL_REPAIRED")).toEqual([]);
      await reopened.close();
      // without the key: every keyed ref the lines list names a sealed blob (no dangling ref)
      const check = verifySessionFile(path, { blobsDir: join(root, "blobs") });
      expect(check.findings).toEqual([]);
    }
    expect(acknowledged.length).toBeGreaterThanOrEqual(15 + 26 + 37);
    for (const name of blobNames(root))
      expect(
        readFileSync(join(root, "blobs", name))
          .subarray(0, 6)
          .toString(),
      ).toBe("tskb1\n");
  }, 120_000);

  it("du counts an encrypted session's keyed blobs (from the clear lists), shared between two sessions", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    await sessionWithImage(root, key);
    await sessionWithImage(root, key);
    const run = await cli(["du", "--root", root, "--json"]);
    expect(run.code).toBe(0);
    const rows = run.records.filter((r) => r.type === "session");
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ exclusiveBlobBytes: 0, sharedBlobBytes: PNG.length + 22 });
    expect(run.records.at(-1)).toMatchObject({ type: "totals", sessions: 2, referencedBlobs: 1, referencedBlobBytes: PNG.length + 22 });
  });

  it("verify (CLI) checks an encrypted session without its key: exit 0 and an UNCHECKED record; a missing keyed blob: exit 1", async () => {
    const root = tempDir();
    const { path } = await sessionWithImage(root, randomBytes(32));
    const run = await cli(["verify", "--root", root, "--json"]);
    expect(run.code).toBe(0);
    expect(run.records.filter((r) => r.type === "unchecked")).toEqual([
      { type: "unchecked", path, message: expect.stringContaining("checked without its key") },
    ]);
    expect(run.records.at(-1)).toMatchObject({ type: "summary", files: 1, entries: 2, findings: 0 });
    rmSync(join(root, "blobs", blobNames(root)[0]!));
    const missing = await cli(["verify", "--root", root, "--json"]);
    expect(missing.code).toBe(1);
    expect(missing.records.filter((r) => r.type === "finding").map((r) => r.kind)).toEqual(["BLOB_MISSING"]);
  });

  it("a torn encrypted image line moved to quarantine still keeps its keyed blob from gc (no key needed)", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const sm = await SessionManager.create(join(root, "project"), { root, encryption: { key } });
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "first" }] });
    sm.appendMessage(image());
    await sm.close();
    const path = sm.sessionFile!;
    const [name] = blobNames(root);
    const whole = readFileSync(path);
    writeFileSync(path, whole.subarray(0, whole.length - 40)); // the image line torn: its tail and newline gone
    const warnings: StoreWarning[] = [];
    const reopened = await SessionManager.open(path, { root, encryption: { key }, onWarning: (w) => warnings.push(w) });
    expect(reopened.getEntries()).toHaveLength(1);
    await reopened.close();
    expect(warnings.map((w) => w.code)).toEqual(["TORN_TAIL_REPAIRED"]);
    const quarantine = `${path.slice(0, -".jsonl".length)}.quarantine.jsonl`;
    expect(existsSync(quarantine)).toBe(true);
    expect(readFileSync(path, "utf8")).not.toContain(name!);
    const report = await collectGarbage({ sessionRoots: [join(root, "sessions")], blobsDir: join(root, "blobs"), graceMs: 0 });
    expect(report.deleted).toEqual([]);
    expect(blobNames(root)).toEqual([name]);
  });
});
