import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundle, unbundle } from "../../src/index.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";
import { bytesOf, makeSession } from "./helpers/bundle-fixtures.ts";

/** A pid above Linux's largest pid_max (2^22): no process ever has it. */
const DEAD_PID = 4_194_400;

describe("the spool of a killed unbundle is counted by du and reclaimed (issue 32 #21)", () => {
  it("du counts a dead spool; the next unbundle removes it and leaves a live process's spool alone", async () => {
    const source = tempDir();
    const { id } = await makeSession("/proj", { root: source });
    const bytes = await bytesOf(bundle([id], { root: source }));
    const root = tempDir();
    await makeSession("/kept", { root }, 2);
    const host = hostname()
      .replace(/[^A-Za-z0-9.-]/g, "_")
      .slice(0, 64);
    const dead = [`.unbundle-${DEAD_PID}-0123456789ab.tmp`, `.unbundle-${DEAD_PID}@${host}-0123456789ab.tmp`];
    const alive = `.unbundle-${process.ppid}@${host}-0123456789ab.tmp`;
    const elsewhere = `.unbundle-${DEAD_PID}@another-host-0123456789ab.tmp`;
    for (const name of [...dead, alive, elsewhere]) {
      mkdirSync(join(root, name));
      writeFileSync(join(root, name, "0"), Buffer.alloc(1000, 1));
    }
    const du = await cli(["du", "--root", root, "--json"]);
    expect(du.code).toBe(0);
    expect(du.records.find((r) => r.type === "totals")).toMatchObject({ spools: 4000 });
    const text = await cli(["du", "--root", root]);
    expect(text.stdout).toContain("unbundle spools");
    expect((await unbundle([bytes], { root })).sessions[0]!.status).toBe("created");
    expect(
      readdirSync(root)
        .filter((n) => n.startsWith(".unbundle-"))
        .sort(),
    ).toEqual([alive, elsewhere].sort());
  });
});
