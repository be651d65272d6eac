import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { quarantinePathOf } from "../../src/session/paths.ts";
import { basename } from "node:path";
import { describe, expect, it } from "vitest";
import { bundle, SessionManager, unbundle } from "../../src/index.ts";
import { tempDir } from "../support/temp-dir.ts";
import { bytesOf, makeSession, treeOf } from "./helpers/bundle-fixtures.ts";

/** A store's files without the blob referrer list (it names the store's own paths). */
const contentOf = (root: string) => {
  const tree = treeOf(root);
  delete tree["blobs/.referrers.jsonl"];
  delete tree["blobs/.proven"]; // the blob store's proof cache, written at each put
  return tree;
};

describe("bundle / unbundle between file trees", () => {
  it("restores sessions byte for byte: lines, artifacts, every blob once; a second run is unchanged and writes nothing", async () => {
    const a = tempDir();
    const b = tempDir();
    const one = await makeSession("/proj/one", { root: a }, 1);
    const two = await makeSession("/proj/two", { root: a }, 2);
    const bytes = await bytesOf(bundle([one.id, two.id], { root: a }));
    const report = await unbundle([bytes], { root: b });
    expect(report.sessions.map((s) => [s.id, s.status])).toEqual([
      [one.id, "created"],
      [two.id, "created"],
    ]);
    expect(report.blobs).toBe(4);
    expect(contentOf(b)).toEqual(contentOf(a));
    expect(Object.keys(contentOf(b)).filter((p) => p.startsWith("blobs/"))).toHaveLength(4);
    const before = treeOf(b);
    const again = await unbundle([bytes], { root: b });
    expect(again.sessions.map((s) => s.status)).toEqual(["unchanged", "unchanged"]);
    expect(treeOf(b)).toEqual(before);
    // the restored session opens with its images
    const m = await SessionManager.open(report.sessions[0]!.location!, { root: b, readOnly: true });
    const content = (m.getEntries()[1] as unknown as { message: { content: Array<{ data?: string }> } }).message.content;
    expect(content[1]!.data).toBe(one.images[0]!.toString("base64"));
    await m.close();
  });

  it("--cwd-map moves a session to its new cwd (header cwd and bucket); the entry lines stay byte for byte", async () => {
    const a = tempDir();
    const b = tempDir();
    const { id, path } = await makeSession("/home/alice/work/app", { root: a });
    const bytes = await bytesOf(bundle([id], { root: a }));
    const report = await unbundle([bytes], { root: b, cwdMap: ["/home/alice=/Users/bob", "/home=/elsewhere"] });
    const s = report.sessions[0]!;
    expect(s.cwd).toBe("/Users/bob/work/app");
    expect(s.location).toContain("/sessions/--Users-bob-work-app--/");
    const [srcHeader, ...srcLines] = readFileSync(path, "utf8").split("\n");
    const [header, ...lines] = readFileSync(s.location!, "utf8").split("\n");
    expect(JSON.parse(header!)).toEqual({ ...JSON.parse(srcHeader!), cwd: "/Users/bob/work/app" });
    expect(lines).toEqual(srcLines);
    const m = await SessionManager.open(s.location!, { root: b, readOnly: true });
    expect(m.header.cwd).toBe("/Users/bob/work/app");
    await m.close();
    // idempotent with the same map
    expect((await unbundle([bytes], { root: b, cwdMap: ["/home/alice=/Users/bob"] })).sessions[0]!.status).toBe("unchanged");
  });

  it("appends what a store lacks of a session that grew; --dry-run says so and writes nothing", async () => {
    const a = tempDir();
    const b = tempDir();
    const { id, path } = await makeSession("/proj", { root: a });
    const first = await unbundle([await bytesOf(bundle([id], { root: a }))], { root: b });
    const source = await SessionManager.open(path, { root: a });
    source.appendMessage({ role: "user", content: "one more" });
    await source.close();
    const grown = await bytesOf(bundle([id], { root: a }));
    const before = treeOf(b);
    const dry = await unbundle([grown], { root: b, dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, sessions: [{ id, status: "appended" }] });
    expect(treeOf(b)).toEqual(before);
    expect((await unbundle([grown], { root: b })).sessions[0]!.status).toBe("appended");
    expect(readFileSync(first.sessions[0]!.location!)).toEqual(readFileSync(source.sessionFile!));
  });

  it("refuses a session the store holds with other content (IMPORT_CONFLICT) before writing any session of the bundle", async () => {
    const a = tempDir();
    const b = tempDir();
    const fresh = await makeSession("/proj/fresh", { root: a }, 1);
    const shared = await makeSession("/proj/shared", { root: a }, 2);
    const copy = await unbundle([await bytesOf(bundle([shared.id], { root: a }))], { root: b });
    for (const [root, path, text] of [
      [a, shared.path, "written on a"],
      [b, copy.sessions[0]!.location!, "written on b"],
    ] as const) {
      const m = await SessionManager.open(path, { root });
      m.appendMessage({ role: "user", content: text });
      await m.close();
    }
    const before = treeOf(b);
    const bytes = await bytesOf(bundle([fresh.id, shared.id], { root: a }));
    await expect(unbundle([bytes], { root: b })).rejects.toMatchObject({ code: "IMPORT_CONFLICT" });
    expect(treeOf(b)).toEqual(before);
    expect(Object.keys(before).some((p) => basename(p).includes(fresh.id))).toBe(false);
  });

  it("bundle refuses an id the store lacks (SESSION_NOT_FOUND) before any byte", async () => {
    const a = tempDir();
    await expect(bytesOf(bundle(["0199ffff-0000-7000-8000-000000000000"], { root: a }))).rejects.toMatchObject({
      code: "SESSION_NOT_FOUND",
    });
  });
});

describe("bundle / unbundle: damaged lines", () => {
  it("a session's quarantine records travel with it (the quarantine file restored byte for byte)", async () => {
    const a = tempDir();
    const b = tempDir();
    const { path } = await makeSession("/proj", { root: a });
    appendFileSync(path, '{"type":"message","id":"deadbeef","torn'); // a torn tail: quarantined when opened for writing
    const again = await SessionManager.open(path, { root: a });
    again.appendMessage({ role: "user", content: "after the damage" });
    const id = again.header.id;
    await again.close();
    const quarantine = quarantinePathOf(path);
    expect(existsSync(quarantine)).toBe(true);
    const report = await unbundle([await bytesOf(bundle([id], { root: a }))], { root: b });
    const restored = report.sessions[0]!.location!;
    expect(readFileSync(quarantinePathOf(restored))).toEqual(readFileSync(quarantine));
    expect(readFileSync(restored)).toEqual(readFileSync(path));
  });

  it("damaged lines inside a session file are not bundled: a MALFORMED_LINES warning names them, the source keeps them", async () => {
    const a = tempDir();
    const { id, path } = await makeSession("/proj", { root: a });
    appendFileSync(path, '{"type":"message","id":"deadbeef", broken json\n');
    const m = await SessionManager.open(path, { root: a });
    m.appendMessage({ role: "user", content: "after" });
    await m.close();
    const warnings: string[] = [];
    const bytes = await bytesOf(bundle([id], { root: a, onWarning: (w) => warnings.push(w.code) }));
    expect(warnings).toEqual(["MALFORMED_LINES"]);
    const report = await unbundle([bytes], { root: tempDir() });
    expect(report.sessions[0]!.lines).toBe(4);
    expect(readFileSync(path, "utf8")).toContain("broken json");
  });
});
