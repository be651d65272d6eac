import { constants } from "node:fs";
import { io, type Io } from "../../src/io.ts";

type Fn = (...args: never[]) => unknown;

/**
 * Wraps one function of the I/O seam: `fail(callIndex, args)` returns an errno code to throw for
 * that call, or undefined to let it through. Returns a restore function.
 */
export function injectFault<K extends keyof Io>(name: K, fail: (call: number, args: unknown[]) => string | undefined): () => void {
  const original = io[name] as unknown as Fn;
  let call = 0;
  (io as Record<string, unknown>)[name] = (...args: unknown[]) => {
    const code = fail(call++, args);
    if (code !== undefined)
      throw Object.assign(new Error(`${code}: injected fault in ${String(name)}`), { code, errno: -1, syscall: String(name) });
    return (original as (...a: unknown[]) => unknown)(...args);
  };
  return () => {
    (io as Record<string, unknown>)[name] = original;
  };
}

/** True when `openSync` flags (a string like "a"/"wx" or numeric O_* bits) open for writing. */
export function opensForWriting(flags: unknown): boolean {
  if (typeof flags === "number") return (flags & (constants.O_WRONLY | constants.O_RDWR)) !== 0;
  return /[wa+]/.test(String(flags));
}
