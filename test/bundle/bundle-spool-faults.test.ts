import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { bundle, unbundle } from "../../src/index.ts";
import { injectFault } from "../support/fault.ts";
import { tempDir } from "../support/temp-dir.ts";
import { bytesOf, makeSession, treeOf } from "./helpers/bundle-fixtures.ts";

let restore: (() => void) | null = null;
afterEach(() => {
  restore?.();
  restore = null;
});

describe("unbundle: a failure of the disk is reported as itself, not as a damaged bundle", () => {
  it("ENOSPC while spooling: thrown with its errno code, the spool directory removed, the store unchanged", async () => {
    const a = tempDir();
    const { id } = await makeSession("/proj", { root: a });
    const bytes = await bytesOf(bundle([id], { root: a }));
    const root = tempDir();
    await makeSession("/kept", { root }, 3);
    const before = treeOf(root);
    restore = injectFault("writeSync", (call) => (call === 2 ? "ENOSPC" : undefined));
    await expect(unbundle([bytes], { root })).rejects.toMatchObject({ code: "ENOSPC" });
    restore();
    restore = null;
    expect(treeOf(root)).toEqual(before);
    expect(readdirSync(root).filter((n) => n.startsWith(".unbundle-"))).toEqual([]);
    // and the same bundle restores once the disk has room
    expect((await unbundle([bytes], { root })).sessions[0]!.status).toBe("created");
  });

  it("a source that fails to read is that error, not BUNDLE_CORRUPT", async () => {
    const root = tempDir();
    async function* failing(): AsyncIterable<Uint8Array> {
      yield Buffer.alloc(512);
      throw Object.assign(new Error("EIO: i/o error, read"), { code: "EIO", errno: -5, syscall: "read" });
    }
    await expect(unbundle(failing(), { root })).rejects.toMatchObject({ code: "EIO" });
    expect(treeOf(root)).toEqual({});
  });
});
