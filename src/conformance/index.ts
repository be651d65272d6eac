/**
 * The conformance suite of transcript-store's storage seam (`transcript-store/conformance`): the
 * behaviours every backend must show through `SessionManager`, registered with the caller's test
 * framework. Our file tree and PostgreSQL backends run it in `npm test`; a new backend runs it the
 * same way (docs/architecture.md, "Add a storage backend").
 *
 * ```ts
 * import { describe, it } from "vitest"; // or node:test, jest, mocha
 * import { runConformance } from "transcript-store/conformance";
 * runConformance({ describe, test: it }, {
 *   name: "mine",
 *   sessionFiles: false,
 *   options: async () => ({ store: myBackend(), root: freshDir() }),
 * });
 * ```
 */
import type { ConformanceBackend, ConformanceFramework, Register } from "./harness.ts";
import { lifecycleBehaviours } from "./lifecycle.ts";
import { sessionManagerBehaviours } from "./session-manager.ts";

export type { ConformanceBackend, ConformanceFramework } from "./harness.ts";
export { conformancePng } from "./png.ts";

/** The groups of behaviours, in the order they run: each registers its tests with `test`. */
export const CONFORMANCE_GROUPS: ReadonlyArray<{ name: string; register: (test: Register, backend: ConformanceBackend) => void }> = [
  { name: "session manager", register: sessionManagerBehaviours },
  { name: "lifecycle", register: lifecycleBehaviours },
];

/**
 * Registers every behaviour against `backend` with `framework`: one `describe` per group
 * (`<group> [<backend name>]`) when the framework has one, else the group in each test's name.
 */
export function runConformance(framework: ConformanceFramework, backend: ConformanceBackend): void {
  for (const group of CONFORMANCE_GROUPS) {
    const title = `${group.name} [${backend.name}]`;
    if (framework.describe) {
      framework.describe(title, () => group.register((name, fn) => void framework.test(name, fn), backend));
    } else {
      group.register((name, fn) => void framework.test(`${title}: ${name}`, fn), backend);
    }
  }
}
