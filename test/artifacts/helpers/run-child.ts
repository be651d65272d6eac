import { join } from "node:path";
import { runTs } from "../../support/child.ts";

/** The artifact tests' child script. */
export const ARTIFACT_CHILD = join(import.meta.dirname, "artifact-child.ts");

/** Runs the child script to completion (output decoded as one UTF-8 stream by `runTs`). */
export function runArtifactChild(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runTs(ARTIFACT_CHILD, args);
}
