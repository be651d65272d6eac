import { readFileSync, statSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/index.ts";
import type { StoreWarning } from "../../src/errors.ts";
import { loadRedactionKey, REDACTION_KEY_FILE } from "../../src/crypto/redaction-key.ts";
import { tempDir } from "../support/temp-dir.ts";
import { codeOf } from "../support/error-code.ts";

const GH = "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";

describe("SessionManager redact option", () => {
  it("writes markers to disk, keeps what was given in memory, and reports SECRET_REDACTED without the secret", async () => {
    const root = tempDir();
    const warnings: StoreWarning[] = [];
    const m = await SessionManager.create(root, { root, redact: "secrets", onWarning: (w) => warnings.push(w) });
    m.appendMessage({ role: "user", content: "no secrets here" });
    expect(existsSync(join(root, REDACTION_KEY_FILE))).toBe(false); // created on first use
    const id = m.appendMessage({ role: "user", content: `push with ${GH}` });
    const disk = readFileSync(m.sessionFile!, "utf8");
    expect(disk).not.toContain(GH);
    expect(disk).toMatch(/push with \[REDACTED:github-token:[0-9a-f]{8}\]/);
    expect(disk).toContain(`"id":"${id}"`);
    expect((m.getEntry(id)!.message as { content: string }).content).toBe(`push with ${GH}`);
    const redacted = warnings.filter((w) => w.code === "SECRET_REDACTED");
    expect(redacted.length).toBe(1);
    expect(redacted[0]!.message).toContain(id);
    expect(redacted[0]!.message).toContain("github-token×1");
    expect(JSON.stringify(warnings)).not.toContain(GH);
    await m.close();
    const keyFile = join(root, REDACTION_KEY_FILE);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile, "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
  });

  it("uses one key per store: equal secrets in two sessions give equal markers", async () => {
    const root = tempDir();
    const a = await SessionManager.create(root, { root, redact: "secrets" });
    a.appendMessage({ role: "user", content: GH });
    const b = await SessionManager.create(root, { root, redact: "secrets" });
    b.appendMessage({ role: "user", content: GH });
    const marker = (path: string) => /\[REDACTED:github-token:[0-9a-f]{8}\]/.exec(readFileSync(path, "utf8"))![0];
    expect(marker(a.sessionFile!)).toBe(marker(b.sessionFile!));
    await a.close();
    await b.close();
  });

  it("writes exactly what was given without the option", async () => {
    const root = tempDir();
    const m = await SessionManager.create(root, { root });
    m.appendMessage({ role: "user", content: GH });
    expect(readFileSync(m.sessionFile!, "utf8")).toContain(GH);
    await m.close();
    expect(existsSync(join(root, REDACTION_KEY_FILE))).toBe(false);
  });

  it("refuses a damaged key file with INVALID_CONFIG and never replaces it", () => {
    const root = tempDir();
    writeFileSync(join(root, REDACTION_KEY_FILE), "short\n");
    expect(codeOf(() => loadRedactionKey(root))).toBe("INVALID_CONFIG");
    expect(readFileSync(join(root, REDACTION_KEY_FILE), "utf8")).toBe("short\n");
  });

  it("refuses a bad redact option with INVALID_OPTION", async () => {
    const root = tempDir();
    await expect(SessionManager.create(root, { root, redact: "everything" as never })).rejects.toMatchObject({ code: "INVALID_OPTION" });
  });
});
