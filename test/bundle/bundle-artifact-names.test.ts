import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import tar from "tar-stream";
import { bundle, unbundle } from "../../src/index.ts";
import { tempDir } from "../support/temp-dir.ts";
import { bytesOf, makeSession, treeOf } from "./helpers/bundle-fixtures.ts";

interface Member {
  header: Partial<tar.Header> & { name: string };
  data: Buffer;
}

async function membersOf(bytes: Buffer): Promise<Member[]> {
  const extract = tar.extract();
  const out: Member[] = [];
  const done = (async () => {
    for await (const entry of extract) out.push({ header: { ...entry.header }, data: await bytesOf(entry as AsyncIterable<Buffer>) });
  })();
  extract.end(bytes);
  await done;
  return out;
}

async function packOf(members: Member[]): Promise<Buffer> {
  const pack = tar.pack();
  const collected = bytesOf(pack as AsyncIterable<Buffer>);
  for (const m of members)
    await new Promise<void>((resolve, reject) =>
      pack.entry({ ...m.header, size: m.data.length }, m.data, (err) => (err ? reject(err) : resolve())),
    );
  pack.finalize();
  return collected;
}

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** The bundle with artifact files `names` added to its first session (a consistent forgery: manifest re-signed). */
async function withArtifacts(bytes: Buffer, names: string[]): Promise<Buffer> {
  const members = await membersOf(bytes);
  const at = members.findIndex((m) => m.header.name === "manifest.json");
  const manifest = JSON.parse(members[at]!.data.toString("utf8")) as {
    sessions: Array<{ dir: string; artifacts: number }>;
    members: Array<{ name: string; size: number; sha256: string }>;
  };
  members.splice(at, 1);
  const session = manifest.sessions[0]!;
  for (const name of names)
    members.push({
      header: { name: `${session.dir}/artifacts/${name}`, type: "file", mode: 0o600 },
      data: Buffer.from(`bytes of ${name}\n`),
    });
  session.artifacts += names.length;
  manifest.members = members.map((m) => ({ name: m.header.name, size: m.data.length, sha256: sha(m.data) }));
  members.push({ header: { name: "manifest.json", type: "file", mode: 0o600 }, data: Buffer.from(JSON.stringify(manifest)) });
  return packOf(members);
}

describe("artifact names that cannot all be files of one directory are refused before anything is written (issue 32 #22)", () => {
  const cases: Array<[string, string[]]> = [
    ["a file and a folder of one name", ["x", "x/y"]],
    ["names equal under case folding", ["Report.txt", "report.txt"]],
    ["names equal under Unicode normalization (NFC and NFD)", ["caf\u00e9.log", "cafe\u0301.log"]],
  ];
  for (const [what, names] of cases) {
    it(`${what}: BUNDLE_CORRUPT, the store unchanged; a good bundle then restores whole`, async () => {
      const source = tempDir();
      const { id } = await makeSession("/proj", { root: source });
      const good = await bytesOf(bundle([id], { root: source }));
      const bad = await withArtifacts(good, names);
      const root = tempDir();
      await expect(unbundle([bad], { root })).rejects.toMatchObject({ code: "BUNDLE_CORRUPT" });
      expect(treeOf(root)).toEqual({});
      const report = await unbundle([good], { root });
      expect(report.sessions[0]!.status).toBe("created");
      const clean = tempDir();
      await unbundle([good], { root: clean });
      expect(treeOf(`${root}/sessions`)).toEqual(treeOf(`${clean}/sessions`));
    });
  }
});
