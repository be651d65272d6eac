import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { closeUrlStores, isStoreUrl } from "../../src/storage/store-url.ts";
import "./memory/memory-register.ts";
import { openSessionIndex } from "../../src/search/session-index.ts";
import { Lifecycle } from "../../src/lifecycle/lifecycle.ts";
import { storeSpace, storeUsage } from "../../src/maintenance/store-accounting.ts";
import { storedRewritesOf } from "../../src/storage/stored-rewrites.ts";
import { MemoryBackend } from "./memory/memory-backend.ts";
import { tempDir } from "../support/temp-dir.ts";

/**
 * The test-only backend is reached like a shipped one: by the URL its registry line names. What it
 * does (the conformance tests by capability) runs from its factory in test/conformance/test-backends.ts.
 */
describe("a backend added from docs/architecture.md: its folder, one registry line, one test factory", () => {
  it("opens from its URL scheme; a capability it does not declare is refused naming it", async () => {
    expect(isStoreUrl("memtest://a")).toBe(true);
    const root = tempDir();
    const m = await SessionManager.create("/work/mem", { store: "memtest://a", root });
    m.appendMessage({ role: "user", content: "hello" });
    await m.close();
    expect((await SessionManager.list("/work/mem", { store: "memtest://a", root })).map((s) => s.id)).toEqual([m.sessionId]);
    await expect(
      SessionManager.create("/work/mem", { store: "memtest://a", root, encryption: { key: Buffer.alloc(32, 1) } }),
    ).rejects.toMatchObject({
      code: "NOT_SUPPORTED",
      message: expect.stringMatching(/^this store \(memory:\/\/\d+\) does not support encryption$/),
    });
    await closeUrlStores();
  });

  it("every service refuses a capability the store does not declare, naming the capability, never a backend", async () => {
    const store = new MemoryBackend();
    const root = tempDir();
    await expect(storeSpace({ store, root })).rejects.toMatchObject({
      code: "NOT_SUPPORTED",
      message: expect.stringMatching(/does not support du and usage$/),
    });
    await expect(storeUsage({ store, root })).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
    expect(() => Lifecycle.open({ store, root })).toThrow(
      expect.objectContaining({ code: "NOT_SUPPORTED", message: expect.stringMatching(/does not support pins, archive and trash$/) }),
    );
    await expect(openSessionIndex({ store })).rejects.toMatchObject({
      code: "INDEX_UNAVAILABLE",
      message: "this store does not support a search index",
    });
    expect(storedRewritesOf.bind(null, store)).toThrow(
      expect.objectContaining({ code: "NOT_SUPPORTED", message: expect.stringMatching(/does not support store maintenance$/) }),
    );
  });
});
