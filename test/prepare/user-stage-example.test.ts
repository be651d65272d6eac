import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DESCEND, mapTree, SessionManager, type PrepareStage } from "../../src/index.ts";
import { tempDir } from "../support/temp-dir.ts";

// The redaction stage of docs/architecture.md ("How to add a prepare stage"), as written there.
const SECRET = /sk-[A-Za-z0-9]{20,}/g;
let calls = 0;
const redactSecrets: PrepareStage = Object.assign(
  (entry: Parameters<PrepareStage>[0]) => {
    calls++;
    return mapTree(entry, {
      visit: (value) => (typeof value === "string" ? value.replace(SECRET, "sk-[redacted]") : DESCEND),
    });
  },
  { needed: (line: string) => line.includes("sk-") },
);

describe("the architecture page's redaction stage", () => {
  it("redacts what reaches disk, runs only for lines that need it, and memory follows the rehydrate mode", async () => {
    const root = tempDir();
    const secret = `sk-${"A1b2".repeat(6)}`;
    calls = 0;
    const eager = await SessionManager.create(root, { root, stages: [redactSecrets] });
    eager.appendMessage({ role: "user", content: "nothing to hide" });
    expect(calls).toBe(0);
    const id = eager.appendMessage({ role: "user", content: `my key is ${secret}` });
    expect(calls).toBe(1);
    expect(readFileSync(eager.sessionFile!, "utf8")).not.toContain(secret);
    expect(readFileSync(eager.sessionFile!, "utf8")).toContain("my key is sk-[redacted]");
    // eager: memory holds the entry as given
    expect((eager.getEntry(id)!.message as { content: string }).content).toContain(secret);
    await eager.close();

    const lazy = await SessionManager.create(root, { root, stages: [redactSecrets], rehydrate: "lazy" });
    const lazyId = lazy.appendMessage({ role: "user", content: `my key is ${secret}` });
    // lazy: memory holds the entry as prepared for disk, so it is redacted too
    expect((lazy.getEntry(lazyId)!.message as { content: string }).content).toBe("my key is sk-[redacted]");
    await lazy.close();
  });
});
