import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/session/session-manager.ts";
import { cli } from "../support/cli.ts";
import { tempDir } from "../support/temp-dir.ts";

async function store(n: number): Promise<{ root: string; ids: string[]; paths: string[] }> {
  const root = tempDir();
  const ids: string[] = [];
  const paths: string[] = [];
  for (let i = 0; i < n; i++) {
    const m = await SessionManager.create("/proj", { root, now: () => new Date(Date.UTC(2026, 0, i + 1)) });
    m.appendMessage({ role: "user", content: `session ${i}`, timestamp: 1 } as never);
    await m.close();
    ids.push(m.sessionId);
    paths.push(m.location!);
  }
  return { root, ids, paths };
}

describe("lifecycle commands", () => {
  it("pin, archive, ls --archived, rm, trash, restore, purge: each reports what it did", async () => {
    const { root, ids, paths } = await store(2);
    const opts = { cwd: "/proj" };
    expect((await cli(["pin", ids[0]!, "--root", root, "--json"], opts)).records).toEqual([{ type: "pinned", id: ids[0], path: paths[0] }]);
    expect((await cli(["archive", ids[1]!, "--root", root], opts)).code).toBe(0);
    const ls = await cli(["ls", "--root", root, "--json"], opts);
    expect(ls.records.map((r) => [r.id, r.pinned])).toEqual([[ids[0], true]]);
    const lsAll = await cli(["ls", "--root", root, "--archived", "--json"], opts);
    expect(lsAll.records.map((r) => [r.id, r.archived === true])).toEqual([
      [ids[1], true],
      [ids[0], false],
    ]);
    // a pinned session is refused, the other still goes: exit 1, both reported
    const rm = await cli(["rm", ids[0]!, ids[1]!, "--root", root, "--json"], opts);
    expect(rm.code).toBe(1);
    expect(rm.records.map((r) => [r.type, r.code ?? r.id])).toEqual([
      ["failed", "SESSION_PINNED"],
      ["trashed", ids[1]],
    ]);
    expect(existsSync(paths[1]!)).toBe(false);
    // as text: the failure on stderr with its code, the removal on stdout, nothing else
    await cli(["restore", ids[1]!, "--root", root], opts);
    const text = await cli(["rm", ids[0]!, ids[1]!, "--root", root], opts);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain("SESSION_PINNED");
    expect(text.stdout.split("\n").filter((l) => l.trim() === "")).toEqual([""]);
    expect(text.stdout.startsWith(`trashed ${ids[1]}`)).toBe(true);
    const trash = await cli(["trash", "--root", root, "--json"], opts);
    expect(trash.records.map((r) => r.id)).toEqual([ids[1]]);
    const restored = await cli(["restore", ids[1]!, "--root", root, "--json"], opts);
    expect(restored.records).toEqual([{ type: "restored", id: ids[1], path: paths[1] }]);
    expect(existsSync(paths[1]!)).toBe(true);
    await cli(["rm", ids[1]!, "--root", root], opts);
    const dry = await cli(["purge", "--all", "--dry-run", "--root", root, "--json"], opts);
    expect(dry.records.map((r) => r.type)).toEqual(["would-purge", "summary"]);
    expect((await cli(["trash", "--root", root, "--json"], opts)).records.length).toBe(1);
    const purged = await cli(["purge", ids[1]!, "--root", root, "--json"], opts);
    expect(purged.records.map((r) => r.type)).toEqual(["purged", "summary"]);
    expect(readdirSync(join(root, "trash"))).toEqual([]);
  });

  it("prune --dry-run lists exactly what the real run then removes, with the bytes", async () => {
    const { root, ids } = await store(3);
    await cli(["pin", ids[0]!, "--root", root]);
    const dry = await cli(["prune", "--older-than", "1d", "--keep-last", "1", "--dry-run", "--root", root, "--json"]);
    expect(dry.code).toBe(0);
    const would = dry.records.filter((r) => r.type === "would-trash");
    expect(would.map((r) => r.id)).toEqual([ids[1]]);
    expect(dry.records.filter((r) => r.type === "skipped").map((r) => [r.id, r.reason])).toEqual([[ids[0], "pinned"]]);
    const summary = dry.records.at(-1)!;
    expect(summary).toMatchObject({ type: "summary", dryRun: true, sessions: 1, bytes: would[0]!.bytes });
    const real = await cli(["prune", "--older-than", "1d", "--keep-last", "1", "--root", root, "--json"]);
    expect(real.records.filter((r) => r.type === "trashed").map((r) => [r.id, r.bytes])).toEqual([[ids[1], would[0]!.bytes]]);
  });

  it("prune without a policy is a usage error; a bad config fails with its code", async () => {
    const { root } = await store(1);
    expect((await cli(["prune", "--root", root])).code).toBe(2);
    expect((await cli(["prune", "--older-than", "soon", "--root", root])).code).toBe(2);
    writeFileSync(join(root, "config.json"), JSON.stringify({ prune: { olderThan: "forever" } }));
    const bad = await cli(["prune", "--root", root, "--json"]);
    expect(bad.code).toBe(1);
    expect(bad.records.at(-1)).toMatchObject({ type: "error", code: "INVALID_CONFIG" });
    writeFileSync(join(root, "config.json"), JSON.stringify({ prune: { olderThan: "1d" } }));
    const fromConfig = await cli(["prune", "--dry-run", "--root", root, "--json"]);
    expect(fromConfig.records.at(-1)).toMatchObject({ type: "summary", sessions: 1 });
  });
});
