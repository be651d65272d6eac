import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionManager } from "../../src/pi/index.ts";
import { tempDir } from "../support/temp-dir.ts";
import { assistant, piHome } from "./helpers.ts";

const GH = "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";
const savedHome = process.env.TRANSCRIPT_STORE_HOME;
afterEach(() => {
  if (savedHome === undefined) delete process.env.TRANSCRIPT_STORE_HOME;
  else process.env.TRANSCRIPT_STORE_HOME = savedHome;
});

describe("pi facade with redact", () => {
  it("writes markers to pi's session file, keeps the key beside the engine's blobs, and keeps memory as given", () => {
    const h = piHome();
    const storeHome = tempDir();
    process.env.TRANSCRIPT_STORE_HOME = storeHome;
    const sm = SessionManager.create(h.cwd, undefined, { agentDir: h.agentDir, redact: "secrets" });
    const id = sm.appendMessage({ role: "user", content: `use ${GH}` });
    sm.appendMessage(assistant("ok"));
    expect((sm.getEntry(id) as unknown as { message: { content: string } }).message.content).toBe(`use ${GH}`);
    const disk = readFileSync(sm.getSessionFile()!, "utf8");
    expect(disk).not.toContain(GH);
    expect(disk).toMatch(/use \[REDACTED:github-token:[0-9a-f]{8}\]/);
    expect(existsSync(join(storeHome, "redaction.key"))).toBe(true);
    expect(statSync(join(storeHome, "redaction.key")).mode & 0o777).toBe(0o600);
  });
});
