import { spawn } from "node:child_process";
import { chownSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../src/errors.ts";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

const CHILD = join(import.meta.dirname, "helpers", "permissions-child.ts");
const NOBODY = 65534;

/**
 * Runs the child as a user permission bits bind: as root (where they do not), through
 * `runuser -u nobody` on a store it owns; otherwise as ourselves.
 */
function runChild(root: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(root, NOBODY, NOBODY);
  const argv = [process.execPath, "--import", "tsx", CHILD, root];
  const [cmd, ...args] = asRoot ? ["runuser", "-u", "nobody", "--", ...argv] : argv;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, args, { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

type Result = { step: string; ok?: true; code?: string; warnings: string[] };

function contents(text: string): unknown[] {
  return text
    .split("\n")
    .filter((l) => l.length > 0)
    .slice(1)
    .map((l) => {
      const content = (JSON.parse(l) as { message?: { content?: unknown } }).message?.content;
      return typeof content === "string" ? content : "image";
    });
}

describe("permissions changed mid-operation (real permission bits, as a non-root user)", () => {
  it("every refusal is coded, every acknowledged entry is on disk, gc deletes nothing it cannot read", async () => {
    const root = tempDir("ts-perm-");
    const run = await runChild(root);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { results: Result[]; blobs: string[]; files: Record<string, string> };
    const by = Object.fromEntries(
      out.results.map((r) => [r.step, r.ok ? (r.warnings.length > 0 ? `ok+${r.warnings.join(",")}` : "ok") : r.code]),
    );
    for (const r of out.results) if (r.code !== undefined) expect(ERROR_CODES, r.step).toContain(r.code);
    expect(by).toEqual({
      "bucket read-only: append to the held session": "ok",
      "bucket read-only: new session in it": "PERSISTENCE_FAILED",
      "bucket read-only: artifact of the held session": "PERSISTENCE_FAILED",
      "bucket read-only: close the held session": "ok",
      "file read-only: open writable and append": "PERSISTENCE_FAILED",
      "file unreadable: open read-only": "PERSISTENCE_FAILED",
      "file unreadable: open writable": "PERSISTENCE_FAILED",
      "file unreadable: list": "ok+PERSISTENCE_FAILED",
      "file unreadable: gc": "PERSISTENCE_FAILED",
      "artifacts read-only: save": "PERSISTENCE_FAILED",
      "artifacts read-only: read the first": "ok",
      "blobs read-only: image append": "PERSISTENCE_FAILED",
      "bucket unreadable: list": "ok+PERSISTENCE_FAILED",
      "bucket unreadable: continueRecent": "ok+PERSISTENCE_FAILED",
      "bucket unreadable: gc": "PERSISTENCE_FAILED",
      "lock dir read-only: append": "ok",
      "lock dir read-only: close": "ok",
    });
    expect(contents(out.files.a!)).toEqual(["a1", "a2"]);
    expect(contents(out.files.c!)).toEqual(["c1"]);
    expect(contents(out.files.d!)).toEqual(["d1", "image"]);
    expect(contents(out.files.e!)).toEqual(["e1", "e2"]);
    expect(out.blobs).toHaveLength(1); // the one image acknowledged; the gcs that could not read deleted nothing
  });
});
