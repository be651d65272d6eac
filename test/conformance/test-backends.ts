import type { BackendUnderTest } from "./backends.ts";

/**
 * Backends that exist only for the tests (not shipped): each is one factory line here, its code in
 * its own folder under test/backends/ (docs/architecture.md, "Add a storage backend").
 */
export const TEST_ONLY_BACKENDS: BackendUnderTest[] = [];
