import type { ResolvedSessionManagerOptions } from "../session/session-options.ts";
import "./builtin-backends.ts"; // the wiring: every built-in backend registered before a store URL is resolved
import { fileBackend } from "./file/file-backend.ts";
import type { StorageBackend } from "./session-storage.ts";

/** The backend that holds the sessions of these options: the `store` given, else the file tree. */
export function backendOf(options: ResolvedSessionManagerOptions): StorageBackend {
  return options.store ?? fileBackend;
}
