import { randomBytes } from "node:crypto";
import { supporting } from "../../src/storage/capabilities.ts";
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StoreWarning } from "../../src/errors.ts";
import { migrateFile } from "../../src/maintenance/migrate-file.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { onLines, spawnTs } from "../support/child.ts";
import { cli } from "../support/cli.ts";
import { expectCode } from "../support/error-code.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers/encrypted-writer-child.ts");
const SECRET = "the launch code is tangerine-42";

/** A stored encrypted session with three messages (one with an image); returns its path, key and ids. */
async function encryptedSession(root: string, key = randomBytes(32)) {
  const sm = await SessionManager.create(join(root, "project"), { root, encryption: { key } });
  const ids = [
    sm.appendMessage({ role: "user", content: SECRET }),
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: `noted: ${SECRET}` }] }),
    sm.appendMessage({
      role: "user",
      content: [
        { type: "text", text: "and a picture" },
        { type: "image", data: makePng(40, 40, 7).toString("base64"), mimeType: "image/png" },
      ],
    }),
  ];
  const entries = sm.getEntries();
  await sm.close();
  return { path: sm.sessionFile!, key, ids, entries, id: sm.sessionId };
}

const lines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.length > 0);

describe("encryption at rest (file store)", () => {
  it("round-trips; the file holds a clear v3 header with the key id and one encrypted object per entry line", async () => {
    const root = tempDir();
    const { path, key, entries, id } = await encryptedSession(root);
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("tangerine");
    expect(text).not.toContain("image/png");
    const [header, ...rest] = lines(path).map((l) => JSON.parse(l));
    expect(header).toMatchObject({ type: "session", version: 3, id, encryption: { scheme: "aes-256-gcm+hkdf-sha256/v1" } });
    expect(typeof header.encryption.keyId).toBe("string");
    expect(rest).toHaveLength(3);
    for (const line of rest.slice(0, 2)) expect(Object.keys(line).sort()).toEqual(["ct", "iv", "tag", "type", "v"]);
    expect(rest.every((l) => l.type === "encrypted" && l.v === 1)).toBe(true);
    // the image went to one keyed blob, named in clear by the line that references it (encryption-blobs.test.ts)
    const stored = readdirSync(join(root, "blobs")).filter((n) => !n.startsWith("."));
    expect(stored).toHaveLength(1);
    expect(rest[2].blobs).toEqual([`blob:hmac-sha256:${stored[0]}`]);

    const reopened = await SessionManager.open(path, { root, encryption: { key } });
    expect(reopened.getEntries()).toEqual(entries);
    const next = reopened.appendMessage({ role: "user", content: "after reopening" });
    await reopened.close();
    const again = await SessionManager.open(path, { root, encryption: { key }, readOnly: true });
    expect(again.getEntries().map((e) => e.id)).toEqual([...entries.map((e) => e.id), next]);
    expect(again.getEntry(next)!.message).toEqual({ role: "user", content: "after reopening" });
    await again.close();
  });

  it("a key provider is asked for the key id the header names", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const asked: string[] = [];
    const provider = async (keyId: string) => {
      asked.push(keyId);
      return key;
    };
    const encryption = { keyId: "kms:team-a", keyProvider: provider };
    const sm = await SessionManager.create(join(root, "p"), { root, encryption });
    sm.appendMessage({ role: "user", content: SECRET });
    await sm.close();
    expect(JSON.parse(lines(sm.sessionFile!)[0]!).encryption.keyId).toBe("kms:team-a");
    const reopened = await SessionManager.open(sm.sessionFile!, {
      root,
      encryption: { keyProvider: provider },
    });
    expect(reopened.getEntries()).toHaveLength(1);
    await reopened.close();
    expect(asked).toEqual(["kms:team-a", "kms:team-a"]);
  });

  it.each([
    ["no key", undefined, "KEY_REQUIRED"],
    ["a wrong key", { key: randomBytes(32) }, "DECRYPT_FAILED"],
    ["a wrong key under the right key id", "same-id", "DECRYPT_FAILED"],
  ])("%s is refused (%s) and the file stays byte-identical", async (_name, given, code) => {
    const root = tempDir();
    const { path, key } = await encryptedSession(root);
    // a torn tail too: an undecryptable file must not be "repaired"
    writeFileSync(path, '{"type":"encrypted","v":1,"iv":"AAAA', { flag: "a" });
    const before = readFileSync(path);
    const encryption =
      given === "same-id"
        ? { key: randomBytes(32), keyId: JSON.parse(lines(path)[0]!).encryption.keyId }
        : (given as { key: Buffer } | undefined);
    expect(key).toBeDefined();
    await expectCode(SessionManager.open(path, { root, encryption }), code);
    await expectCode(SessionManager.open(path, { root, encryption, readOnly: true }), code);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(existsSync(`${path.slice(0, -".jsonl".length)}.quarantine.jsonl`)).toBe(false);
  });

  it("a tampered line is DECRYPT_FAILED, never served, and nothing is written", async () => {
    const root = tempDir();
    const { path, key } = await encryptedSession(root);
    const all = lines(path);
    const line = JSON.parse(all[2]!);
    const ct = Buffer.from(line.ct, "base64");
    ct[3]! ^= 0x01;
    all[2] = JSON.stringify({ ...line, ct: ct.toString("base64") });
    writeFileSync(path, `${all.join("\n")}\n`);
    const before = readFileSync(path);
    await expectCode(SessionManager.open(path, { root, encryption: { key } }), "DECRYPT_FAILED");
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("swapped lines, a dropped middle line and a line copied from another session are DECRYPT_FAILED", async () => {
    const root = tempDir();
    const { path, key } = await encryptedSession(root);
    const original = lines(path);
    const other = await encryptedSession(tempDir(), key);
    const variants = [
      [original[0], original[2], original[1], original[3]],
      [original[0], original[1], original[3]],
      [original[0], original[1], lines(other.path)[2], original[3]],
    ];
    for (const variant of variants) {
      writeFileSync(path, `${variant.join("\n")}\n`);
      const before = readFileSync(path);
      await expectCode(SessionManager.open(path, { root, encryption: { key } }), "DECRYPT_FAILED");
      expect(readFileSync(path).equals(before)).toBe(true);
    }
    writeFileSync(path, `${original.join("\n")}\n`);
    const intact = await SessionManager.open(path, { root, encryption: { key }, readOnly: true });
    expect(intact.getEntries()).toHaveLength(3);
    await intact.close();
  });

  it("a header stripped of its encryption is DECRYPT_FAILED (no downgrade to plain appends), the file byte-identical", async () => {
    const root = tempDir();
    const { path, key } = await encryptedSession(root);
    const [head, ...rest] = lines(path);
    const { encryption: _dropped, ...plainHeader } = JSON.parse(head!);
    writeFileSync(path, `${[JSON.stringify(plainHeader), ...rest].join("\n")}\n`);
    const before = readFileSync(path);
    await expectCode(SessionManager.open(path, { root }), "DECRYPT_FAILED");
    await expectCode(SessionManager.open(path, { root, encryption: { key } }), "DECRYPT_FAILED");
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("readers that do not decrypt refuse an encrypted session (KEY_REQUIRED): migrate in place leaves it byte-identical", async () => {
    const root = tempDir();
    const { path } = await encryptedSession(root);
    const before = readFileSync(path);
    const report = await migrateFile(path, { sessionsDir: join(root, "sessions"), blobsDir: join(root, "blobs"), inPlace: true });
    expect(report.status).toBe("failed");
    expect(report.error?.code).toBe("KEY_REQUIRED");
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("the search index holds no plaintext of an encrypted session (its entries are not searchable; a plain one's are)", async () => {
    const root = tempDir();
    const encrypted = await encryptedSession(root);
    const plain = await SessionManager.create(join(root, "plain"), { root });
    plain.appendMessage({ role: "user", content: "tangerine in the clear" });
    plain.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }] });
    await plain.close();
    const run = await cli(["search", "tangerine", "--root", root, "--json"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(plain.sessionId);
    expect(run.stdout).not.toContain(encrypted.id);
    for (const file of readdirSync(join(root, "index"), { recursive: true, encoding: "utf8" })) {
      const path = join(root, "index", file);
      if (statSync(path).isFile()) expect(readFileSync(path).includes(SECRET), file).toBe(false);
    }
  });

  it("deferUntilAssistant writes the kept-back entries encrypted, in order", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const sm = await SessionManager.create(join(root, "p"), { root, encryption: { key }, deferUntilAssistant: true });
    sm.appendMessage({ role: "user", content: SECRET });
    sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }] });
    sm.appendMessage({ role: "user", content: "third" });
    const entries = sm.getEntries();
    await sm.close();
    expect(readFileSync(sm.sessionFile!, "utf8")).not.toContain("tangerine");
    const reopened = await SessionManager.open(sm.sessionFile!, { root, encryption: { key }, readOnly: true });
    expect(reopened.getEntries()).toEqual(entries);
    await reopened.close();
  });

  it("moveTo keeps an encrypted session readable (its lines are bound to its id, not its path)", async () => {
    const root = tempDir();
    const { path, key, entries } = await encryptedSession(root);
    const sm = await SessionManager.open(path, { root, encryption: { key } });
    await sm.moveTo(join(root, "elsewhere"));
    const added = sm.appendMessage({ role: "user", content: "after the move" });
    await sm.close();
    expect(sm.sessionFile).not.toBe(path);
    const moved = await SessionManager.open(sm.sessionFile!, { root, encryption: { key }, readOnly: true });
    expect(moved.getEntries().map((e) => e.id)).toEqual([...entries.map((e) => e.id), added]);
    await moved.close();
    expect(readFileSync(sm.sessionFile!, "utf8")).not.toContain("after the move");
  });

  it("a torn final encrypted line is repaired into quarantine like a plain one; later appends read back", async () => {
    const root = tempDir();
    const { path, key, ids } = await encryptedSession(root);
    const size = readFileSync(path).length;
    const last = lines(path).at(-1)!;
    truncateSync(path, size - Math.floor(last.length / 2));
    const warnings: StoreWarning[] = [];
    const sm = await SessionManager.open(path, { root, encryption: { key }, onWarning: (w) => warnings.push(w) });
    expect(warnings.map((w) => w.code)).toContain("TORN_TAIL_REPAIRED");
    expect(sm.getEntries().map((e) => e.id)).toEqual(ids.slice(0, 2));
    const added = sm.appendMessage({ role: "user", content: "after repair" });
    await sm.close();
    const again = await SessionManager.open(path, { root, encryption: { key }, readOnly: true });
    expect(again.getEntries().map((e) => e.id)).toEqual([...ids.slice(0, 2), added]);
    await again.close();
  });

  it("SIGKILL of a child mid-append: every acknowledged entry reads back after reopening with the key", async () => {
    const root = tempDir();
    const key = randomBytes(32);
    const first = await SessionManager.create(join(root, "p"), { root, encryption: { key } });
    first.appendMessage({ role: "user", content: SECRET });
    await first.close();
    const path = first.sessionFile!;
    const acknowledged: string[] = [];
    for (let round = 0; round < 3; round++) {
      const child = spawnTs(CHILD, [path, root, key.toString("hex")]);
      let stderr = "";
      child.stderr!.on("data", (d) => (stderr += d));
      await new Promise<void>((resolve, reject) => {
        let seen = 0;
        onLines(child, (line) => {
          if (line.startsWith("ready")) return;
          acknowledged.push(line);
          if (++seen === 20 + round * 17) child.kill("SIGKILL");
        });
        child.on("exit", (_c, signal) => (signal === "SIGKILL" ? resolve() : reject(new Error(`child exited on its own: ${stderr}`))));
      });
      const past = new Date(Date.now() - 60_000);
      if (existsSync(`${path}.lock`)) utimesSync(`${path}.lock`, past, past);
      const reopened = await SessionManager.open(path, { root, encryption: { key }, lockStaleMs: 2000 });
      const ids = new Set(reopened.getEntries().map((e) => e.id));
      for (const id of acknowledged) expect(ids.has(id), `round ${round}: ${id} lost`).toBe(true);
      expect(reopened.loadReport.malformed).toEqual([]);
      acknowledged.push(reopened.appendMessage({ role: "user", content: `after round ${round}` }));
      await reopened.close();
    }
    expect(readFileSync(path, "utf8")).not.toContain("after round");
  }, 120_000);

  it("forks stay encrypted (under the fork's own id); a fork without the key is KEY_REQUIRED", async () => {
    const root = tempDir();
    const { path, key, entries } = await encryptedSession(root);
    const source = await SessionManager.open(path, { root, encryption: { key } });
    const fork = await source.fork();
    await fork.close();
    await source.close();
    expect(readFileSync(fork.sessionFile!, "utf8")).not.toContain(SECRET);
    const reread = await SessionManager.open(fork.sessionFile!, { root, encryption: { key }, readOnly: true });
    expect(reread.getEntries()).toEqual(entries);
    await reread.close();
    const byPath = await SessionManager.forkFrom(path, join(root, "q"), { root, encryption: { key } });
    expect(byPath.getEntries()).toEqual(entries);
    await byPath.close();
    expect(readFileSync(byPath.sessionFile!, "utf8")).not.toContain(SECRET);
    const buckets = readdirSync(join(root, "sessions")).sort();
    await expectCode(SessionManager.forkFrom(path, join(root, "r"), { root }), "KEY_REQUIRED");
    expect(readdirSync(join(root, "sessions")).sort()).toEqual(buckets);
  });

  it.each([
    ["a short key", { encryption: { key: randomBytes(16) } }],
    ["both key and provider", { encryption: { key: randomBytes(32), keyProvider: async () => randomBytes(32) } }],
    ["a provider without keyId (create)", { encryption: { keyProvider: async () => randomBytes(32) } }],
    ["lazy rehydration", { encryption: { key: randomBytes(32) }, rehydrate: "lazy" as const }],
    ["incognito", { encryption: { key: randomBytes(32) }, incognito: true }],
  ])("refuses %s (INVALID_OPTION)", async (_name, options) => {
    const root = tempDir();
    await expectCode(SessionManager.create(join(root, "p"), { root, ...options }), "INVALID_OPTION");
    expect(readdirSync(root)).toEqual([]);
  });

  it("refuses a store that does not declare encryption (NOT_SUPPORTED, naming the capability)", async () => {
    const root = tempDir();
    const store = { kind: "plain", name: "plain://x", supports: supporting(), open: async () => null } as never;
    const err = await SessionManager.create(join(root, "p"), { root, encryption: { key: randomBytes(32) }, store }).catch((e) => e);
    expect(err).toMatchObject({ code: "NOT_SUPPORTED", message: "this store (plain://x) does not support encryption" });
    expect(readdirSync(root)).toEqual([]);
  });
});
