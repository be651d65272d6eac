import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MAX_ENTRY_DEPTH } from "../../src/prepare/pipeline.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { codeOf } from "../support/error-code.ts";
import { nested } from "../support/hostile-values.ts";
import { tempDir } from "../support/temp-dir.ts";

/**
 * An appended entry is nested at most MAX_ENTRY_DEPTH levels. Before, the limit was whatever
 * JSON.stringify managed on the caller's stack: an entry nested ~3,000 deep was acknowledged,
 * and then `export` (and every other walk with less stack per level) died on it with
 * "Maximum call stack size exceeded". Now what is accepted can be read, exported and forked.
 */
describe("entries nested past MAX_ENTRY_DEPTH", () => {
  it("are refused at append (PERSISTENCE_FAILED): nothing written, nothing in memory, the session goes on", async () => {
    const root = tempDir("ts-deep-");
    const m = await SessionManager.create("/work/deep", { root });
    const a = m.appendCustomEntry("ok", { n: 1 });
    const file = m.sessionFile!;
    const before = readFileSync(file);
    for (const depth of [MAX_ENTRY_DEPTH, MAX_ENTRY_DEPTH + 500, 3_000, 100_000]) {
      for (const shape of ["array", "object"] as const) {
        // the entry is one level: `data` nested `depth` deep makes depth + 1
        expect(
          codeOf(() => m.appendCustomEntry("deep", nested(depth, shape, "leaf"))),
          `${shape} ${depth}`,
        ).toBe("PERSISTENCE_FAILED");
      }
    }
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(codeOf(() => m.appendCustomEntry("loop", circular))).toBe("PERSISTENCE_FAILED");
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(m.getEntries().map((e) => e.id)).toEqual([a]);
    const b = m.appendCustomEntry("ok", { n: 2 });
    expect(m.getEntry(b)!.parentId).toBe(a);
    await m.close();
  });

  it("the deepest accepted entry round-trips through a reopen, export and a fork", async () => {
    const root = tempDir("ts-deep-");
    const m = await SessionManager.create("/work/deep", { root });
    const value = nested(MAX_ENTRY_DEPTH - 1, "array", "\u0000leaf");
    const id = m.appendCustomEntry("deep", value);
    const line = JSON.stringify(m.getEntry(id));
    const branch = await m.fork({ atEntryId: id });
    await branch.close();
    await m.close();
    expect(readFileSync(m.sessionFile!, "utf8").split("\n")[1]).toBe(line);
    const again = await SessionManager.open(m.sessionFile!, { root, readOnly: true });
    expect(JSON.stringify(again.getEntry(id))).toBe(line);
    await again.close();
    expect(readFileSync(branch.sessionFile!, "utf8").split("\n")[1]).toBe(line);
    const exported = await cli(["export", m.sessionId, "--root", root]);
    expect(exported.stderr).toBe("");
    expect(exported.code).toBe(0);
    expect(exported.stdout.split("\n")[1]).toBe(line);
  });
});
