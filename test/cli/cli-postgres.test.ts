import { describe, expect, it } from "vitest";
import { SessionManager } from "../../src/index.ts";
import { cli } from "../support/cli.ts";
import { makePng } from "../support/png.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

const image = (seed: number) => ({
  role: "user",
  content: [{ type: "image", data: makePng(24, 24, seed).toString("base64"), mimeType: "image/png" }],
  timestamp: 1,
});

/** A file store with two sessions of `/proj` that share one image, and one of `/other`. */
async function fileTree(root: string) {
  const made: SessionManager[] = [];
  for (const [cwd, seeds] of [
    ["/proj", [1, 2]],
    ["/proj", [1]],
    ["/other", [3]],
  ] as const) {
    const m = await SessionManager.create(cwd, { root });
    m.appendMessage({ role: "user", content: `hello ${cwd}`, timestamp: 1 });
    for (const seed of seeds) m.appendMessage(image(seed));
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 });
    await m.close();
    made.push(m);
  }
  return made;
}

describe.skipIf(!pgCluster())("the CLI against a PostgreSQL store", () => {
  it("verify and stats count an archived session (archive hides it from listings only)", async () => {
    const root = tempDir();
    const url = await freshDatabase();
    const sessions = await fileTree(root);
    expect((await cli(["migrate", "--root", root, "--to", url])).code).toBe(0);
    const env = { TRANSCRIPT_STORE_URL: url };
    expect((await cli(["archive", sessions[0]!.sessionId], { env })).code).toBe(0);
    const verify = await cli(["verify", "--json"], { env });
    expect(verify.code).toBe(0);
    expect(verify.records.at(-1)).toMatchObject({ sessions: 3, findings: 0 });
    expect((await cli(["stats", "--json"], { env })).records[0]).toMatchObject({ sessions: 3, references: 4 });
  });

  it("migrate --to imports a file tree (ids kept, blobs once), re-runs as unchanged, and every command works on it", async () => {
    const root = tempDir();
    const url = await freshDatabase();
    const sessions = await fileTree(root);
    const first = await cli(["migrate", "--root", root, "--to", url, "--json"]);
    expect(first.code).toBe(0);
    const files = first.records.filter((r) => r.type === "file");
    expect(files.map((r) => r.status)).toEqual(["imported", "imported", "imported"]);
    expect(files.map((r) => r.id).sort()).toEqual(sessions.map((m) => m.sessionId).sort());
    const again = await cli(["migrate", "--root", root, "--to", url, "--json"]);
    expect(again.records.filter((r) => r.type === "file").map((r) => r.status)).toEqual(["unchanged", "unchanged", "unchanged"]);

    const env = { TRANSCRIPT_STORE_URL: url };
    const stats = await cli(["stats", "--json"], { env });
    expect(stats.records[0]).toMatchObject({ sessions: 3, blobs: 3, referencedBlobs: 3, references: 4 });

    const ls = await cli(["ls", "/proj", "--json"], { env });
    expect(ls.records.map((r) => r.id).sort()).toEqual(
      sessions
        .slice(0, 2)
        .map((m) => m.sessionId)
        .sort(),
    );

    const target = sessions[0]!;
    const exported = await cli(["export", target.sessionId.slice(0, 24)], { env });
    expect(exported.code).toBe(0);
    const fromFile = await cli(["export", target.sessionFile!, "--root", root]);
    expect(exported.stdout).toBe(fromFile.stdout);

    const forked = await cli(["fork", target.sessionId, "--cwd", "/forked", "--json"], { env });
    expect(forked.code).toBe(0);
    const moved = await cli(["mv", forked.records[0]!.id, "/moved", "--json"], { env });
    expect(moved.records[0]).toMatchObject({ type: "moved", cwd: "/moved" });
    expect((await cli(["ls", "/moved", "--json"], { env })).records.map((r) => r.id)).toEqual([forked.records[0]!.id]);

    const verify = await cli(["verify", "--json"], { env });
    expect(verify.code).toBe(0);
    expect(verify.records.at(-1)).toMatchObject({ sessions: 4, findings: 0 });

    const gc = await cli(["gc", "--grace", "0", "--json"], { env });
    expect(gc.code).toBe(0);
    expect(gc.records.filter((r) => r.type === "deleted")).toEqual([]);

    const imported = await cli(["import", "--json"], {
      env,
      stdin: fromFile.stdout.replaceAll(target.sessionId, "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee"),
    });
    expect(imported.records[0]).toMatchObject({ type: "imported", id: "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee" });
    const show = await cli(["show", "0199aaaa", "--json"], { env });
    expect(show.records[0]).toMatchObject({ entries: 4 });
  });

  it("migrate --to again after the source session moved brings the new cwd across (updated), then reports unchanged", async () => {
    const root = tempDir();
    const url = await freshDatabase();
    const m = await SessionManager.create("/proj", { root });
    m.appendMessage({ role: "user", content: "hello", timestamp: 1 });
    m.appendMessage({ role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 2 });
    await m.close();
    expect((await cli(["migrate", "--root", root, "--to", url])).code).toBe(0);
    const source = await SessionManager.open(m.sessionFile!, { root });
    await source.moveTo("/proj-moved");
    await source.close();
    const again = await cli(["migrate", "--root", root, "--to", url, "--json"]);
    expect(again.code).toBe(0);
    expect(again.records[0]).toMatchObject({ status: "updated", id: m.sessionId, header: "updated" });
    const env = { TRANSCRIPT_STORE_URL: url };
    expect((await cli(["ls", "/proj-moved", "--json"], { env })).records.map((r) => r.id)).toEqual([m.sessionId]);
    expect((await cli(["ls", "/proj", "--json"], { env })).records).toEqual([]);
    const exported = await cli(["export", m.sessionId], { env });
    expect(JSON.parse(exported.stdout.split("\n")[0]!)).toMatchObject({ id: m.sessionId, cwd: "/proj-moved" });
    expect((await cli(["migrate", "--root", root, "--to", url, "--json"])).records[0]).toMatchObject({
      status: "unchanged",
      header: "same",
    });
    // moved in the database since: a re-run says so, and keeps it
    expect((await cli(["mv", m.sessionId, "/proj-db"], { env })).code).toBe(0);
    const kept = await cli(["migrate", "--root", root, "--to", url]);
    expect(kept.stdout).toMatch(/^continued .*header changed in the target store since the import: kept/m);
    expect((await cli(["ls", "/proj-db", "--json"], { env })).records.map((r) => r.id)).toEqual([m.sessionId]);
  });

  it("refuses a store URL that is not postgres://, as a usage error", async () => {
    const res = await cli(["ls"], { env: { TRANSCRIPT_STORE_URL: "mysql://x" } });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/postgres:\/\//);
  });
});
