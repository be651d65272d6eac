import { registerBackend } from "../../../src/storage/backend-registry.ts";
import { MemoryBackend } from "./memory-backend.ts";

/** The test-only backend's registry line: `memtest://<name>` opens a fresh in-memory store (one per URL and process). */
registerBackend({
  schemes: ["memtest"],
  description: "a test-only in-memory store (not shipped)",
  open: () => new MemoryBackend(),
});
