import { spawn } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT } from "../../support/child.ts";

/** The artifact tests' child script. */
export const ARTIFACT_CHILD = join(import.meta.dirname, "artifact-child.ts");

/**
 * Runs the child script to completion. Output is decoded as one UTF-8 stream (`setEncoding`),
 * so a multi-byte character split between two pipe reads is not turned into U+FFFD.
 */
export function runArtifactChild(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", ARTIFACT_CHILD, ...args], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (d: string) => (stdout += d));
    child.stderr.on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
