import { spawn } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT, runTs } from "../../support/child.ts";

/** The artifact tests' child script. */
export const ARTIFACT_CHILD = join(import.meta.dirname, "artifact-child.ts");

/** Runs the child script to completion (output decoded as one UTF-8 stream by `runTs`). */
export function runArtifactChild(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runTs(ARTIFACT_CHILD, args);
}

/** A child started with `startArtifactChild`: it prints "ready", waits for `go()`, then its result. */
export interface WaitingChild<T> {
  ready: Promise<void>;
  go: () => void;
  /** The JSON the child printed after "ready", once it exited 0. */
  done: Promise<T>;
}

/** Starts the child script in a mode that waits for "go" on stdin, so racing children start together. */
export function startArtifactChild<T>(args: string[], label: string): WaitingChild<T> {
  const child = spawn(process.execPath, ["--import", "tsx", ARTIFACT_CHILD, ...args], { cwd: REPO_ROOT, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let markReady: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (d: string) => {
    stdout += d;
    if (stdout.startsWith("ready\n")) markReady();
  });
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<T>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`child ${label} exited ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout.slice("ready\n".length)) as T);
    });
  });
  return { ready, go: () => child.stdin!.end("go\n"), done };
}
