import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { io } from "../../src/io.ts";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

const header = { type: "session", id: "reimport-1", timestamp: "2025-03-01T00:00:00.000Z", cwd: "/home/u/reimport" };
const msg = (text: string) => ({ type: "message", timestamp: "t", message: { role: "user", content: text } });
const jsonl = (records: object[]) => `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
const texts = (m: SessionManager) => m.getEntries().map((e) => (e.message as { content: string }).content);

/** A v1 source imported once into a fresh store; returns where the store copy went. */
async function importedOnce(): Promise<{ src: string; root: string; target: string }> {
  const dir = tempDir();
  const src = join(dir, "legacy.jsonl");
  writeFileSync(src, jsonl([header, msg("a"), msg("b")]));
  const root = join(dir, "store");
  const first = await cli(["migrate", src, "--root", root, "--json"]);
  expect(first.code).toBe(0);
  return { src, root, target: first.records[0]!.target as string };
}

async function continueInStore(target: string, root: string, text: string): Promise<void> {
  const m = await SessionManager.open(target, { root });
  m.appendMessage({ role: "user", content: text });
  await m.close();
}

describe("migrate (import) never destroys store content", () => {
  it("a store copy continued after the import is left alone and reported as continued", async () => {
    const { src, root, target } = await importedOnce();
    await continueInStore(target, root, "continued in the store");
    const storeBytes = readFileSync(target);
    const again = await cli(["migrate", src, "--root", root, "--json"]);
    expect(readFileSync(target).equals(storeBytes)).toBe(true);
    expect(again.code).toBe(0);
    expect(again.records[0]).toMatchObject({ status: "continued", target });
    expect(texts(await SessionManager.open(target, { root, readOnly: true }))).toEqual(["a", "b", "continued in the store"]);
  });

  it("a source that grew while the store copy did not brings the store copy up to date", async () => {
    const { src, root, target } = await importedOnce();
    appendFileSync(src, jsonl([msg("c")]));
    const again = await cli(["migrate", src, "--root", root, "--json"]);
    expect(again.code).toBe(0);
    expect(again.records[0]).toMatchObject({ status: "updated", target });
    expect(texts(await SessionManager.open(target, { root, readOnly: true }))).toEqual(["a", "b", "c"]);
    expect((await cli(["migrate", src, "--root", root, "--json"])).records[0]).toMatchObject({ status: "current" });
  });

  it("both grew: a conflict (exit 1), the store copy untouched and every store entry kept", async () => {
    const { src, root, target } = await importedOnce();
    await continueInStore(target, root, "store only");
    appendFileSync(src, jsonl([msg("source only")]));
    const storeBytes = readFileSync(target);
    const sourceBytes = readFileSync(src);
    const again = await cli(["migrate", src, "--root", root, "--json"]);
    expect(again.code).toBe(1);
    expect(again.records[0]).toMatchObject({ status: "conflict", error: { code: "IMPORT_CONFLICT" } });
    expect(again.records.at(-1)).toMatchObject({ type: "totals", conflicts: 1 });
    expect(readFileSync(target).equals(storeBytes)).toBe(true);
    expect(readFileSync(src).equals(sourceBytes)).toBe(true);
    expect(readdirSync(join(target, "..")).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });
});

describe("migrate (import) after the source moved to another cwd", () => {
  it("reports a conflict (IMPORT_CONFLICT) instead of importing the session a second time into the new cwd's bucket", async () => {
    const { src, root, target } = await importedOnce();
    const storeBytes = readFileSync(target);
    writeFileSync(src, jsonl([{ ...header, cwd: "/home/u/moved" }, msg("a"), msg("b")]));
    const again = await cli(["migrate", src, "--root", root, "--json"]);
    expect(again.code).toBe(1);
    expect(again.records[0]).toMatchObject({ status: "conflict", error: { code: "IMPORT_CONFLICT" } });
    expect(again.records[0]!.error.message).toContain(target);
    // one copy of the session in the store, untouched
    const ls = await cli(["ls", "--all", "--root", root, "--json"]);
    expect(ls.records.filter((r) => r.id === header.id).map((r) => r.path)).toEqual([target]);
    expect(readFileSync(target).equals(storeBytes)).toBe(true);
    expect(readdirSync(join(root, "sessions")).sort()).toEqual([basename(dirname(target))]);
  });
});

describe("migrate never renames over content it did not read", () => {
  it("an update is abandoned when the store copy is written to meanwhile (by a writer without the lock)", async () => {
    const { src, root, target } = await importedOnce();
    appendFileSync(src, jsonl([msg("c")]));
    const original = io.openSync;
    let appended = false;
    io.openSync = ((path: string, flags: string, mode?: number) => {
      if (!appended && typeof path === "string" && path.endsWith(".tmp") && flags === "r") {
        appended = true;
        appendFileSync(
          target,
          '{"type":"message","id":"ffffffff","parentId":null,"timestamp":"t","message":{"role":"user","content":"late"}}\n',
        );
      }
      return original(path, flags, mode);
    }) as typeof io.openSync;
    let result;
    try {
      result = await cli(["migrate", src, "--root", root, "--json"]);
    } finally {
      io.openSync = original;
    }
    expect(appended).toBe(true);
    expect(result.code).toBe(1);
    expect(texts(await SessionManager.open(target, { root, readOnly: true }))).toEqual(["a", "b", "late"]);
  });

  it("a line appended by another (lock-less) writer during the migration is not lost", async () => {
    const dir = tempDir();
    const src = join(dir, "legacy.jsonl");
    writeFileSync(src, jsonl([header, msg("a")]));
    const original = io.openSync;
    let appended = false;
    // pi does not take our lock: simulate its append landing while the migration verifies its copy.
    io.openSync = ((path: string, flags: string, mode?: number) => {
      if (!appended && typeof path === "string" && path.endsWith(".tmp") && flags === "r") {
        appended = true;
        appendFileSync(src, jsonl([msg("appended by pi")]));
      }
      return original(path, flags, mode);
    }) as typeof io.openSync;
    let result;
    try {
      result = await cli(["migrate", src, "--in-place", "--root", join(dir, "store"), "--json"]);
    } finally {
      io.openSync = original;
    }
    expect(appended).toBe(true);
    expect(result.code).toBe(1);
    expect(result.records[0]).toMatchObject({ status: "failed", error: { code: "PERSISTENCE_FAILED" } });
    expect(readFileSync(src, "utf8")).toBe(jsonl([header, msg("a"), msg("appended by pi")]));
    expect((await cli(["migrate", src, "--in-place", "--root", join(dir, "store"), "--json"])).records[0]).toMatchObject({
      status: "migrated",
      entries: 2,
    });
  });

  it("--backup never replaces an earlier backup", async () => {
    const dir = tempDir();
    const src = join(dir, "legacy.jsonl");
    const v1 = jsonl([header, msg("a")]);
    writeFileSync(src, v1);
    const root = join(dir, "store");
    expect((await cli(["migrate", src, "--in-place", "--backup", "--root", root])).code).toBe(0);
    expect(readFileSync(`${src}.bak`, "utf8")).toBe(v1);
    appendFileSync(src, "{broken\n"); // the next in-place run has something to change
    const v3WithDamage = readFileSync(src, "utf8");
    expect((await cli(["migrate", src, "--in-place", "--backup", "--root", root])).code).toBe(0);
    expect(readFileSync(`${src}.bak`, "utf8")).toBe(v1);
    expect(readFileSync(`${src}.2.bak`, "utf8")).toBe(v3WithDamage);
  });
});
