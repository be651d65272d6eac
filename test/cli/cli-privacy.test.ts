import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cliProcess } from "../support/cli.ts";
import { expectCode } from "../support/error-code.ts";
import { makePng } from "../support/png.ts";
import { tempDir } from "../support/temp-dir.ts";

/** A plain store: one session with an image and an artifact, one with text only. */
async function plainStore() {
  const root = tempDir();
  const a = await SessionManager.create("/proj", { root });
  a.appendMessage({
    role: "user",
    content: [
      { type: "text", text: "the quince secret" },
      { type: "image", data: makePng(20, 20, 3).toString("base64"), mimeType: "image/png" },
    ],
    timestamp: 1,
  } as never);
  a.artifacts!.save("artifact plum output", { toolType: "bash" });
  await a.close();
  const b = await SessionManager.create("/proj", { root });
  b.appendMessage({ role: "user", content: "the medlar words", timestamp: 1 } as never);
  await b.close();
  const keyFile = join(tempDir(), "store.key");
  writeFileSync(keyFile, randomBytes(32).toString("hex"), { mode: 0o600 });
  return { root, a, b, keyFile };
}

/** Every file under `dir`, as bytes. */
function allBytes(dir: string): Buffer {
  const parts: Buffer[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) parts.push(readFileSync(join(e.parentPath, e.name)));
  return Buffer.concat(parts);
}

describe("privacy from the command line (issue 36 #1)", () => {
  it("encrypt seals sessions, images and artifacts; --key-file or the env var reads them; decrypt undoes it", async () => {
    const { root, a, b, keyFile } = await plainStore();
    const entries = a.getEntries();
    const png = makePng(20, 20, 3);
    expect(allBytes(root).includes(Buffer.from("quince"))).toBe(true);
    const on = await cliProcess(["encrypt", "--key-file", keyFile, "--root", root]);
    expect(on.code).toBe(0);
    expect(on.stdout.toString()).toContain("2 session(s) encrypted, 0 already so, 0 failed; new sessions are encrypted");
    // the clear image copies are left for gc (another session may share them): gc --grace 0 takes them now
    expect(on.stderr.toString()).toBe("the images' clear copies stay in the blob store until gc takes them (gc --grace 0: now)\n");
    expect((await cliProcess(["gc", "--grace", "0", "--root", root])).code).toBe(0);
    // no clear text, no image bytes, no artifact text anywhere in the store
    const stored = allBytes(root);
    for (const clear of [Buffer.from("quince"), Buffer.from("medlar"), Buffer.from("plum output"), png])
      expect([clear.length, stored.includes(clear)]).toEqual([clear.length, false]);
    expect(JSON.parse(readFileSync(join(root, "config.json"), "utf8"))).toEqual({ encrypt: true });
    // without a key: refused with its code; with --key-file, or the env var, read
    const without = await cliProcess(["show", a.sessionId, "--root", root]);
    expect(without.code).toBe(1);
    expect(without.stderr.toString()).toContain("KEY_REQUIRED");
    const shown = await cliProcess(["show", a.sessionId, "--key-file", keyFile, "--root", root]);
    expect(shown.code).toBe(0);
    expect(shown.stdout.toString()).toContain("quince");
    const viaEnv = await cliProcess(["export", b.sessionId, "--no-redact", "--root", root], {
      env: { TRANSCRIPT_STORE_KEY_FILE: keyFile },
    });
    expect(viaEnv.code).toBe(0);
    expect(viaEnv.stdout.toString()).toContain("medlar");
    // the store setting: a new session without a key is refused, never written in clear
    await expectCode(SessionManager.create("/proj", { root }), "KEY_REQUIRED");
    // decrypt: every entry as it was, the image and the artifact readable without a key
    const off = await cliProcess(["decrypt", "--root", root], { env: { TRANSCRIPT_STORE_KEY_FILE: keyFile } });
    expect(off.code).toBe(0);
    expect(off.stdout.toString()).toContain("2 session(s) decrypted");
    expect(JSON.parse(readFileSync(join(root, "config.json"), "utf8"))).toEqual({ encrypt: false });
    const reopened = await SessionManager.open(a.sessionFile!, { root, readOnly: true });
    expect(reopened.getEntries()).toEqual(entries);
    await reopened.close();
    expect(allBytes(root).includes(Buffer.from("artifact plum output"))).toBe(true);
  });

  it("decrypt with the wrong key fails with DECRYPT_FAILED and leaves the session byte for byte", async () => {
    const { root, a, keyFile } = await plainStore();
    expect((await cliProcess(["encrypt", a.sessionId, "--key-file", keyFile, "--root", root])).code).toBe(0);
    const before = readFileSync(a.sessionFile!);
    const wrong = join(tempDir(), "wrong.key");
    writeFileSync(wrong, randomBytes(32), { mode: 0o600 });
    const run = await cliProcess(["decrypt", a.sessionId, "--key-file", wrong, "--root", root]);
    expect(run.code).toBe(1);
    expect(run.stdout.toString()).toMatch(/failed .*DECRYPT_FAILED/);
    expect(readFileSync(a.sessionFile!).equals(before)).toBe(true);
  });

  it("a key is never taken on the command line; a missing key is KEY_REQUIRED", async () => {
    const { root } = await plainStore();
    const run = await cliProcess(["encrypt", "--key", "00".repeat(32), "--root", root]);
    expect(run.code).toBe(2);
    const none = await cliProcess(["encrypt", "--root", root]);
    expect(none.code).toBe(1);
    expect(none.stderr.toString()).toContain("KEY_REQUIRED");
  });
});

describe("commands that skip encrypted sessions say so (issue 36 #3)", () => {
  it("usage, du, search and index --status name how many encrypted sessions they did not count", async () => {
    const { root, a, keyFile } = await plainStore();
    expect((await cliProcess(["encrypt", a.sessionId, "--key-file", keyFile, "--root", root])).code).toBe(0);
    for (const args of [["usage"], ["du"], ["search", "medlar"], ["index", "--status"]]) {
      const run = await cliProcess([...args, "--root", root]);
      expect([args[0], run.code]).toEqual([args[0], 0]);
      // no advice a key would not honour: these commands do not decrypt (a new user's pass)
      const who = args[0] === "index" ? "the index" : args[0];
      expect(run.stderr.toString()).toContain(`1 encrypted session not counted: ${who} does not read encrypted sessions yet`);
    }
  });
});

const GH = "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";

describe("redaction at write time from the CLI (issue 36 #4)", () => {
  it("import --redact and migrate --redact write no secret; the store setting redact: true does it for every new write", async () => {
    const { root, a } = await plainStore();
    // a session holding a token, exported as it is
    const leaky = await SessionManager.create("/proj", { root });
    leaky.appendMessage({ role: "user", content: `my token is ${GH}`, timestamp: 1 } as never);
    await leaky.close();
    const exported = (await cliProcess(["export", leaky.sessionId, "--no-redact", "--root", root])).stdout.toString();
    expect(exported).toContain(GH);
    const file = join(tempDir(), "leaky.ndjson");
    writeFileSync(file, exported);
    const target = tempDir();
    const imported = await cliProcess(["import", file, "--redact", "--root", target, "--json"]);
    expect(imported.code).toBe(0);
    expect(allBytes(target).includes(Buffer.from(GH))).toBe(false);
    expect(allBytes(target).includes(Buffer.from("[REDACTED:"))).toBe(true);
    // migrate --redact: a foreign tree's files imported without the secret
    const migrated = tempDir();
    const run = await cliProcess(["migrate", leaky.sessionFile!, "--redact", "--root", migrated]);
    expect(run.code).toBe(0);
    expect(allBytes(join(migrated, "sessions")).includes(Buffer.from(GH))).toBe(false);
    // the store setting: a session written through the library is redacted as it is written
    const set = tempDir();
    writeFileSync(join(set, "config.json"), JSON.stringify({ redact: true }));
    const m = await SessionManager.create("/proj", { root: set });
    m.appendMessage({ role: "user", content: `again ${GH}`, timestamp: 1 } as never);
    await m.close();
    expect(readFileSync(m.sessionFile!, "utf8")).not.toContain(GH);
    expect(a.sessionId).toBeDefined();
  });
});

describe("export and import of an encrypted session (issue 36 #1)", () => {
  it("the export is clear under a header naming no key; import into an encrypting store seals it or refuses", async () => {
    const { root, b, keyFile } = await plainStore();
    expect((await cliProcess(["encrypt", "--key-file", keyFile, "--root", root])).code).toBe(0);
    const exported = await cliProcess(["export", b.sessionId, "--key-file", keyFile, "--root", root]);
    expect(exported.code).toBe(0);
    const [header] = exported.stdout.toString().split("\n");
    expect(JSON.parse(header!).encryption).toBeUndefined();
    const file = join(tempDir(), "b.ndjson");
    writeFileSync(file, exported.stdout);
    const target = tempDir();
    writeFileSync(join(target, "config.json"), JSON.stringify({ encrypt: true }));
    const refused = await cliProcess(["import", file, "--root", target]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.toString()).toContain("KEY_REQUIRED");
    const other = tempDir();
    writeFileSync(join(other, "config.json"), JSON.stringify({ encrypt: true }));
    const sealed = await cliProcess(["import", file, "--key-file", keyFile, "--root", other, "--json"]);
    expect(sealed.code).toBe(0);
    const path = JSON.parse(sealed.stdout.toString()).path;
    expect(readFileSync(path, "utf8")).not.toContain("medlar");
    const shown = await cliProcess(["show", b.sessionId, "--key-file", keyFile, "--root", other]);
    expect(shown.stdout.toString()).toContain("medlar");
  });
});

describe("a store that encrypts new sessions (issue 36 #1)", () => {
  it("unbundle and fork write no clear session into it: sealed with the key, refused without", async () => {
    const { root, b, keyFile } = await plainStore();
    const file = join(tempDir(), "b.tar");
    expect((await cliProcess(["bundle", b.sessionId, "-o", file, "--root", root])).code).toBe(0);
    const target = tempDir();
    writeFileSync(join(target, "config.json"), JSON.stringify({ encrypt: true }));
    const refused = await cliProcess(["unbundle", file, "--root", target]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.toString()).toContain("KEY_REQUIRED");
    const sealed = await cliProcess(["unbundle", file, "--key-file", keyFile, "--root", target, "--json"]);
    expect(sealed.code).toBe(0);
    const path = JSON.parse(sealed.stdout.toString()).location;
    expect(readFileSync(path, "utf8")).not.toContain("medlar");
    writeFileSync(join(root, "config.json"), JSON.stringify({ encrypt: true }));
    expect((await cliProcess(["fork", b.sessionId, "--root", root])).code).toBe(1);
    const fork = await cliProcess(["fork", b.sessionId, "--key-file", keyFile, "--root", root, "--json"]);
    expect(fork.code).toBe(0);
    expect(readFileSync(JSON.parse(fork.stdout.toString()).path, "utf8")).not.toContain("medlar");
  });
});
