import { MemoryBackend } from "../backends/memory/memory-backend.ts";
import "../backends/memory/memory-register.ts"; // its registry line: memtest:// URLs
import { tempDir } from "../support/temp-dir.ts";
import type { BackendUnderTest } from "./backends.ts";

/**
 * Backends that exist only for the tests (not shipped): each is one factory here, its code in its
 * own folder under test/backends/ (docs/architecture.md, "Add a storage backend").
 */
export const TEST_ONLY_BACKENDS: BackendUnderTest[] = [
  {
    name: "memory",
    supports: new MemoryBackend().supports,
    sessionFiles: false,
    options: async () => ({ store: new MemoryBackend(), root: tempDir("ts-conf-mem-") }),
    cliArgs: null,
    storedLines: async (m, options) => (options.store as MemoryBackend).linesOf(m.sessionId).map((l) => Buffer.from(l, "utf8")),
    missingRef: "nope",
  },
];
