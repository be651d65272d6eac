import { io, type Io } from "../../src/io.ts";
import { opensForWriting } from "./fault.ts";

/** The seam functions that change the disk: a fault matrix fails each of their calls in turn. */
const WRITE_STEPS = [
  "openSync",
  "writeSync",
  "fsyncSync",
  "fdatasyncSync",
  "ftruncateSync",
  "renameSync",
  "linkSync",
  "copyFileSync",
  "mkdirSync",
  "unlinkSync",
  "utimesSync",
] as const;

function isWriteOpen(name: string, args: unknown[]): boolean {
  if (name !== "openSync") return true;
  return opensForWriting(args[1]);
}

/**
 * Counts write steps while `fn` runs, and (when `failAt` is given) makes the step with that index
 * throw an errno error. Returns how many write steps ran.
 */
export async function withWriteFault<T>(
  failAt: number | null,
  code: string,
  fn: () => Promise<T> | T,
): Promise<{ steps: number; result?: T; error?: unknown }> {
  const originals = new Map<string, unknown>();
  let steps = 0;
  for (const name of WRITE_STEPS) {
    const original = io[name] as unknown as (...a: unknown[]) => unknown;
    originals.set(name, original);
    (io as Record<string, unknown>)[name] = (...args: unknown[]) => {
      if (isWriteOpen(name, args)) {
        if (steps++ === failAt) throw Object.assign(new Error(`${code}: injected at ${name}`), { code, syscall: name });
      }
      return original(...args);
    };
  }
  try {
    const result = await fn();
    return { steps, result };
  } catch (error) {
    return { steps, error };
  } finally {
    for (const [name, original] of originals) (io as Record<string, unknown>)[name as keyof Io] = original;
  }
}
