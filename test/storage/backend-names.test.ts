import { describe, expect, it } from "vitest";
import { registerBackend, registeredBackends, storeUrlForms } from "../../src/storage/backend-registry.ts";
import { supporting } from "../../src/storage/capabilities.ts";
import { isStoreUrl, storeFromUrl } from "../../src/storage/store-url.ts";

/**
 * The registry picks a backend by scheme; nothing else names one (scripts/backend-names.ts, run by
 * `npm run check` and test/architecture/backend-names.test.ts). No test here pins which schemes are
 * registered: a new backend adds its line to storage/builtin-backends.ts and nothing else changes.
 */
describe("backends register themselves by scheme", () => {
  it("a registered scheme opens its backend, any case; an unknown one is refused naming the registered forms", () => {
    const opened: string[] = [];
    registerBackend({
      schemes: ["regtest"],
      description: "a test store",
      open: (url) => {
        opened.push(url);
        return { kind: "regtest", supports: supporting() } as never;
      },
    });
    expect(registeredBackends().map((b) => b.schemes)).toContainEqual(["regtest"]);
    expect(storeUrlForms()).toContain("regtest://");
    expect(isStoreUrl("REGTEST://h/db")).toBe(true);
    expect(isStoreUrl("nosuch://h/db")).toBe(false);
    expect(isStoreUrl("/some/dir")).toBe(false);
    storeFromUrl("regtest://h/one");
    storeFromUrl("regtest://h/one");
    expect(opened).toEqual(["regtest://h/one"]);
    let message = "";
    try {
      storeFromUrl("nosuch://u:secret@h/db");
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe(`store URL must start with ${storeUrlForms()} (got "nosuch://u:***@h/db")`);
  });
});
