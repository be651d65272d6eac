import { chmodSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { getDefaultSessionDir } from "../../src/pi/file-entries.ts";
import { linkTree } from "../../src/session/artifact-dir-copy.ts";
import { loadRedactionKey, REDACTION_KEY_FILE } from "../../src/crypto/redaction-key.ts";
import { backupSessionFile } from "../../src/session/session-file.ts";
import { tempDir } from "../support/temp-dir.ts";

let umask = 0;
beforeEach(() => {
  umask = process.umask(0o022);
});
afterEach(() => {
  process.umask(umask);
});

const mode = (path: string) => statSync(path).mode & 0o777;

describe("directories and files the store makes go through its one creator: 0700 / 0600 under umask 022 (issue 32, #7)", () => {
  it("the redaction key made in a new root: the root 0700, the key 0600", () => {
    const root = join(tempDir("ts-modes-"), "new-root");
    loadRedactionKey(root);
    expect(mode(root)).toBe(0o700);
    expect(mode(join(root, REDACTION_KEY_FILE))).toBe(0o600);
  });

  it("pi's per-cwd session directory and its parents made 0700", () => {
    const agentDir = join(tempDir("ts-modes-"), "agent");
    const dir = getDefaultSessionDir("/work/project", agentDir);
    expect([mode(agentDir), mode(join(agentDir, "sessions")), mode(dir)]).toEqual([0o700, 0o700, 0o700]);
  });

  it("a copy the store makes of a file that was 0644 (a backup, a copied artifact) is 0600", () => {
    const dir = tempDir("ts-modes-");
    const session = join(dir, "s.jsonl");
    writeFileSync(session, "{}\n");
    chmodSync(session, 0o644);
    expect(mode(backupSessionFile(session))).toBe(0o600);
    const src = join(dir, "artifacts-src");
    mkdirSync(src);
    writeFileSync(join(src, "0.bash.log"), "output");
    chmodSync(join(src, "0.bash.log"), 0o644);
    const dst = join(dir, "artifacts-dst");
    expect(linkTree(src, dst, () => {}, "copy", false).copied).toBe(1);
    expect(readdirSync(dst).map((name) => mode(join(dst, name)))).toEqual([0o600]);
  });
});
