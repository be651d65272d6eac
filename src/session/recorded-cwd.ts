import { isAbsolute, win32 } from "node:path";

/**
 * Where a session whose source names no usable working directory (none, `""`, or a relative path)
 * is filed: a visible placeholder, never the importing process's own cwd (`resolve("")`), where it
 * would pass for one of the user's sessions there.
 */
export const UNKNOWN_CWD = "/unknown-cwd";

/** True when `cwd` is an absolute path here or on Windows (a recorded cwd the store can file a session under). */
export function isRecordedAbsolute(cwd: unknown): cwd is string {
  return typeof cwd === "string" && cwd.length > 0 && (isAbsolute(cwd) || win32.isAbsolute(cwd));
}

/** The cwd a header gets from another program's record: the recorded one when absolute, else `UNKNOWN_CWD`. */
export function cwdOrPlaceholder(cwd: unknown): string {
  return isRecordedAbsolute(cwd) ? cwd : UNKNOWN_CWD;
}
