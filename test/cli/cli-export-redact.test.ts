import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { REDACTION_KEY_FILE } from "../../src/crypto/redaction-key.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

const GH = "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";
const AWS = "AKIAZZZZZZZZZZZZZZZZ";
const MARKER = /\[REDACTED:github-token:[0-9a-f]{8}\]/g;

/** A store written without redaction: a secret in an entry and one in a damaged line. */
async function leakySession() {
  const root = tempDir();
  const m = await SessionManager.create(join(root, "proj"), { root });
  m.appendMessage({ role: "user", content: `token ${GH}` });
  await m.close();
  appendFileSync(m.sessionFile!, `{"type":"message","id":"deadbeef", "x":"${AWS}" broken\n`);
  return { root, m };
}

describe("export redacts by default", () => {
  it("replaces secrets in entries and damaged lines, creates no key file, and says so on stderr", async () => {
    const { root, m } = await leakySession();
    const run = await cli(["export", m.sessionId, "--root", root]);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain(GH);
    expect(run.stdout.match(MARKER)?.length).toBe(1);
    const raw = run.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((r) => typeof r.raw_base64 === "string");
    const bytes = Buffer.from(raw.raw_base64, "base64").toString("latin1");
    expect(bytes).not.toContain(AWS);
    expect(bytes).toMatch(/^\{"type":"message","id":"deadbeef", "x":"\[REDACTED:aws-access-key:[0-9a-f]{8}\]" broken$/);
    expect(run.stderr).toContain("github-token×1");
    expect(run.stderr).toContain("aws-access-key×1");
    expect(run.stderr).not.toContain(GH);
    expect(existsSync(join(root, REDACTION_KEY_FILE))).toBe(false);
    // the file itself is untouched: export reads
    expect(readFileSync(m.sessionFile!, "utf8")).toContain(GH);
    // and the redacted stream imports
    const other = tempDir();
    const imported = await cli(["import", "--root", other], { stdin: run.stdout });
    expect(imported.code).toBe(0);
  });

  it("--no-redact exports exactly what is stored", async () => {
    const { root, m } = await leakySession();
    const run = await cli(["export", m.sessionId, "--root", root, "--no-redact"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(GH);
    expect(run.stdout).not.toMatch(MARKER);
    expect(run.stderr).not.toContain("redacted");
  });

  it("uses the store's key: a secret redacted on write and one redacted on export share a marker", async () => {
    const root = tempDir();
    const written = await SessionManager.create(join(root, "proj"), { root, redact: "secrets" });
    written.appendMessage({ role: "user", content: GH });
    await written.close();
    const stored = readFileSync(written.sessionFile!, "utf8").match(MARKER)![0];
    const plain = await SessionManager.create(join(root, "proj"), { root });
    plain.appendMessage({ role: "user", content: GH });
    await plain.close();
    const run = await cli(["export", plain.sessionId, "--root", root]);
    expect(run.stdout.match(MARKER)).toEqual([stored]);
  });
});

describe("the readable and interchange views redact by default too", () => {
  it("html, markdown and atif show a marker, never the secret, unless --no-redact", async () => {
    const root = tempDir();
    const m = await SessionManager.create(join(root, "proj"), { root });
    m.appendMessage({ role: "user", content: `token ${GH}` });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: `stored ${AWS} for you` }], model: "m" } as never);
    await m.close();
    for (const format of ["html", "markdown", "atif"]) {
      const run = await cli(["export", m.sessionId, "--to", format, "--root", root]);
      expect(run.code, format).toBe(0);
      expect(run.stdout, format).not.toContain(GH);
      expect(run.stdout, format).not.toContain(AWS);
      expect(run.stdout, format).toMatch(/\[REDACTED:github-token:[0-9a-f]{8}\]/);
      expect(run.stderr, format).toContain("github-token×1");
      const plain = await cli(["export", m.sessionId, "--to", format, "--no-redact", "--root", root]);
      expect(plain.code, format).toBe(0);
      expect(plain.stdout, format).toContain(GH);
    }
    expect(existsSync(join(root, REDACTION_KEY_FILE))).toBe(false);
  });
});
