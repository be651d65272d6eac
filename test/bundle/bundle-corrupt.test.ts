import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
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
  for (const m of members) {
    await new Promise<void>((resolve, reject) =>
      pack.entry({ ...m.header, size: m.data.length }, m.data, (err) => (err ? reject(err) : resolve())),
    );
  }
  pack.finalize();
  return collected;
}

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

type Manifest = { members: Array<{ name: string; size: number; sha256: string }>; missingBlobs: string[] };

/** Rewrites the bundle: `edit` changes the members and the manifest (a consistent forgery unless it says otherwise). */
async function tampered(bytes: Buffer, edit: (members: Member[], manifest: Manifest) => void, resign = false): Promise<Buffer> {
  const members = await membersOf(bytes);
  const at = members.findIndex((m) => m.header.name === "manifest.json");
  const manifest = JSON.parse(members[at]!.data.toString("utf8")) as Manifest;
  members.splice(at, 1);
  edit(members, manifest);
  if (resign) manifest.members = members.map((m) => ({ name: m.header.name, size: m.data.length, sha256: sha(m.data) }));
  members.push({ header: { name: "manifest.json", type: "file", mode: 0o600 }, data: Buffer.from(JSON.stringify(manifest)) });
  return packOf(members);
}

const find = (members: Member[], suffix: string) => members.find((m) => m.header.name.endsWith(suffix))!;

/** Flips bits of one byte of the member whose name ends in `suffix`. */
const flip = (members: Member[], suffix: string, at: number, bits: number) => {
  const data = find(members, suffix).data;
  data[at] = data[at]! ^ bits;
};

describe("unbundle refuses a damaged or forged bundle with BUNDLE_CORRUPT, nothing written", () => {
  let good: Buffer;
  beforeAll(async () => {
    const a = tempDir("ts-bundle-src-");
    const { id } = await makeSession("/proj", { root: a });
    good = await bytesOf(bundle([id], { root: a }));
  });

  /** A target store holding a session already; its files must be the same after the refusal. */
  async function refused(bytes: Buffer, code = "BUNDLE_CORRUPT"): Promise<void> {
    const root = tempDir("ts-bundle-dst-");
    await makeSession("/other", { root }, 9);
    const before = treeOf(root);
    await expect(unbundle([bytes], { root })).rejects.toMatchObject({ code });
    expect(treeOf(root)).toEqual(before);
  }

  it("the untampered bundle is accepted (the control of this suite)", async () => {
    const root = tempDir();
    expect((await unbundle([good], { root })).sessions[0]!.status).toBe("created");
    expect((await unbundle([await tampered(good, () => {})], { root })).sessions[0]!.status).toBe("unchanged");
  });

  it("a flipped byte in a member", async () => {
    await refused(await tampered(good, (members) => flip(members, "lines.jsonl", 10, 0x01)));
    await refused(await tampered(good, (members) => flip(members, ".notes.log", 0, 0x20)));
  });

  it("a flipped byte in a tar header or a member's bytes (the block padding and end blocks hold no content)", async () => {
    const inManifest = good.indexOf('"format"');
    expect(inManifest).toBeGreaterThan(0);
    for (const at of [100, 148, 600, Math.floor(good.length / 2), inManifest + 3]) {
      const bytes = Buffer.from(good);
      bytes[at]! ^= 0x04;
      await refused(bytes);
    }
  });

  it("a truncated archive", async () => {
    for (const cut of [0.25, 0.5, 0.9, 0.99]) await refused(good.subarray(0, Math.floor(good.length * cut)));
    await refused(Buffer.from("not a tar archive at all"));
  });

  it("a missing blob: its member gone, or gone with its manifest entry too", async () => {
    await refused(
      await tampered(
        good,
        (members) =>
          void members.splice(
            members.findIndex((m) => m.header.name.startsWith("blobs/")),
            1,
          ),
      ),
    );
    await refused(
      await tampered(
        good,
        (members) =>
          void members.splice(
            members.findIndex((m) => m.header.name.startsWith("blobs/")),
            1,
          ),
        true, // the manifest forged to match: the lines still reference it
      ),
    );
  });

  it("a blob whose bytes are not its hash, even with a manifest made to match", async () => {
    await refused(
      await tampered(good, (members) => flip(members, members.find((m) => m.header.name.startsWith("blobs/"))!.header.name, 0, 1), true),
    );
  });

  it("an extra member, listed or not", async () => {
    const extra = { header: { name: "sessions/0/artifacts/extra.log", type: "file" as const, mode: 0o600 }, data: Buffer.from("x") };
    await refused(await tampered(good, (members) => void members.push(extra)));
    await refused(
      await tampered(good, (members) => void members.push({ ...extra, header: { ...extra.header, name: "sessions/7/lines.jsonl" } }), true),
    );
    await refused(await tampered(good, (members) => void members.push({ ...extra, header: { ...extra.header, name: "README" } })));
  });

  it("a name that leaves the bundle (`../`, absolute), a link, a duplicate", async () => {
    const evil = (name: string) => ({ header: { name, type: "file" as const, mode: 0o600 }, data: Buffer.from("evil") });
    await refused(await tampered(good, (members) => void members.unshift(evil("../escaped")), true));
    await refused(await tampered(good, (members) => void members.unshift(evil("sessions/0/artifacts/../../../../escaped")), true));
    await refused(await tampered(good, (members) => void members.unshift(evil("/tmp/escaped")), true));
    await refused(
      await tampered(
        good,
        (members) =>
          void members.unshift({
            header: { name: "sessions/0/artifacts/link", type: "symlink", linkname: "/etc/passwd" },
            data: Buffer.alloc(0),
          }),
      ),
    );
    await refused(await tampered(good, (members) => void members.push({ ...find(members, "header.jsonl") })));
  });

  it("a manifest lying about a size, a hash, a count, or missing", async () => {
    await refused(
      await tampered(good, (_, manifest) => {
        manifest.members[1]!.size += 1;
      }),
    );
    await refused(
      await tampered(good, (_, manifest) => {
        manifest.members[1]!.sha256 = "0".repeat(64);
      }),
    );
    await refused(
      await tampered(good, (_, manifest) => {
        (manifest as unknown as { sessions: Array<{ lines: number }> }).sessions[0]!.lines += 1;
      }),
    );
    await refused(await tampered(good, (_, manifest) => void manifest.members.pop()));
    const noManifest = (await membersOf(good)).filter((m) => m.header.name !== "manifest.json");
    await refused(await packOf(noManifest));
  });
});
