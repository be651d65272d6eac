import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSessionInfo, type SessionInfo } from "../../src/session/session-info.ts";
import { REPO_ROOT } from "../support/child.ts";
import { sharedData } from "../support/shared-data.ts";
import { tempDir } from "../support/temp-dir.ts";

/**
 * The listing info of every file here must stay what it was (the snapshot was written by the
 * reader of commit 714bcc5; counts made exact, `modified` the last message's time and pi's session
 * name the title by issue 22): a faster reader may skip work, never change a field. `modified` is
 * snapshotted unless it is the file's mtime (the fallback); `path` is shown by its name.
 */
function listing(path: string): unknown {
  const info = readSessionInfo(path);
  if (info === null) return null;
  const { path: _path, modified, created, ...rest } = info as SessionInfo;
  const birth = created.getTime() === statSync(path).birthtime.getTime();
  const mtime = modified.getTime() === statSync(path).mtime.getTime();
  return {
    ...rest,
    created: birth ? "the file's birth time" : created.toISOString(),
    modified: mtime ? "the file's mtime" : modified.toISOString(),
  };
}

const header = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: "session",
    version: 3,
    id: "0190a5d2-0000-7000-8000-00000000beef",
    timestamp: "2026-01-02T03:04:05.000Z",
    cwd: "/p",
    ...extra,
  });
const msg = (id: string, role: string, content: unknown) =>
  JSON.stringify({ type: "message", id, parentId: null, timestamp: "t", message: { role, content } });

const jsonl = (...lines: string[]) => lines.map((l) => `${l}\n`).join("");

/** Crafted files: damaged, glued, pretty-printed, windows cut in odd places. */
function craftedFiles(dir: string): string[] {
  const long = "word ".repeat(900);
  const files: Record<string, string> = {
    "plain.jsonl": jsonl(header(), msg("a", "user", "hello   there\n\tfriend"), msg("b", "assistant", [{ type: "text", text: "hi" }])),
    "content-array.jsonl": `${[
      header(),
      msg("a", "user", [
        { type: "image", data: "AAAA" },
        { type: "text", text: "  look\u00a0here  " },
      ]),
    ].join("\n")}\n`,
    "user-no-text.jsonl": `${[header(), msg("a", "user", [{ type: "image", data: "AAAA" }]), msg("b", "user", "second")].join("\n")}\n`,
    "escapes.jsonl": `${[header(), msg("a", "user", 'quote " and \\ and \u2028 and 🎉 and \u0000')].join("\n")}\n`,
    "torn.jsonl": `${[header(), msg("a", "user", "x")].join("\n")}\n{"type":"message","id":"c`,
    "torn-parsable.jsonl": [header(), msg("a", "user", "x")].join("\n"),
    "glued.jsonl": `${header()}\n${msg("a", "user", "one")}${msg("b", "assistant", "two")}\n${msg("c", "user", "three")}\n`,
    "glued-header.jsonl": `${header()}${msg("a", "user", "one")}\n`,
    "pretty.jsonl": `${JSON.stringify(JSON.parse(header()), null, 2)}\n${JSON.stringify(JSON.parse(msg("a", "user", "x")), null, 2)}\n`,
    "bom-crlf.jsonl": `\ufeff${header()}\r\n${msg("a", "user", "crlf")}\r\n`,
    "blank-first.jsonl": `\n   \n${header()}\n${msg("a", "user", "after blanks")}\n`,
    "nul-run.jsonl": `${header()}\n\0\0\0\0${msg("a", "user", "after nuls")}\n`,
    "title-slot.jsonl": `${JSON.stringify({ type: "title", title: `My title${" ".repeat(60)}` })}\n${header()}\n${msg("a", "user", "t")}\n`,
    "title-and-header-title.jsonl": `${JSON.stringify({ type: "title", title: "slot" })}\n${header({ title: "own" })}\n`,
    "garbage.jsonl": "not json at all\n{}\n",
    "not-header.jsonl": `${msg("a", "user", "x")}\n${header()}\n`,
    "empty.jsonl": "",
    "no-timestamp.jsonl": jsonl(JSON.stringify({ type: "session", version: 3, id: "x1", cwd: "/q" })),
    "parent.jsonl": `${header({ parentSession: "/a/b.jsonl" })}\n${msg("a", "user", "p")}\n`,
    "long-user.jsonl": `${[header(), msg("a", "user", long)].join("\n")}\n`,
    "late-user.jsonl": `${[
      header(),
      ...Array.from({ length: 40 }, (_, i) => msg(`x${i}`, "assistant", "filler ".repeat(20))),
      msg("u", "user", "late"),
    ].join("\n")}\n`,
    "big-header.jsonl": `${[header({ pad: "p".repeat(6000) }), msg("a", "user", "after a big header")].join("\n")}\n`,
    "big.jsonl": `${[
      header(),
      msg("a", "user", "first"),
      ...Array.from({ length: 300 }, (_, i) => msg(`m${i}`, i % 2 ? "user" : "assistant", `text ${i}`)),
    ].join("\n")}\n`,
    "big-torn.jsonl": `${jsonl(header(), ...Array.from({ length: 300 }, (_, i) => msg(`m${i}`, "assistant", `text ${i}`)))}{"type":`,
    "invalid-utf8.jsonl": "",
    "type-not-first.jsonl": `${JSON.stringify({ id: "z", role: "user", type: "message", message: { content: "order", role: "user" } })}\n`,
  };
  const out: string[] = [];
  for (const [name, text] of Object.entries(files)) {
    const path = join(dir, name);
    writeFileSync(path, text);
    out.push(path);
  }
  // a user line with a byte that is not UTF-8, then a good one
  const bad = Buffer.concat([
    Buffer.from(`${header()}\n${msg("a", "user", "bad ?").replace("?", "")}`),
    Buffer.from([0xff]),
    Buffer.from(`\n${msg("b", "user", "good")}\n`),
  ]);
  writeFileSync(join(dir, "invalid-utf8.jsonl"), bad);
  // "type-not-first" needs a header before it
  writeFileSync(join(dir, "type-not-first.jsonl"), `${header()}\n${readFileSync(join(dir, "type-not-first.jsonl"), "utf8")}`);
  return out;
}

/** Prefixes of a file cut at window-sized places, and a copy with every 3rd newline lost. */
function variantsOf(source: string, dir: string): string[] {
  const bytes = readFileSync(source);
  const out: string[] = [];
  for (const cut of [1000, 4095, 4096, 4097, 8191, 8192, 8193, 12_000, 70_000]) {
    if (cut >= bytes.length) continue;
    const path = join(dir, `${cut}-${source.split("/").at(-1)}`);
    writeFileSync(path, bytes.subarray(0, cut));
    out.push(path);
  }
  let n = 0;
  const glued = join(dir, `glued-${source.split("/").at(-1)}`);
  writeFileSync(
    glued,
    bytes.toString("utf8").replace(/\n/g, () => (++n % 3 === 0 ? "" : "\n")),
  );
  out.push(glued);
  return out;
}

const named = (paths: string[]) => Object.fromEntries(paths.map((p) => [p.split("/").at(-1)!, listing(p)]));

describe("listing info stays what it was (snapshot of the reader before the faster one)", () => {
  it("crafted files: damaged, glued, pretty-printed, torn, BOM, title slot, NULs, odd windows", () => {
    const dir = tempDir();
    const files = craftedFiles(dir);
    const variants = files.filter((f) => /(big|late-user|big-header)\.jsonl$/.test(f)).flatMap((f) => variantsOf(f, dir));
    expect(named([...files, ...variants])).toMatchSnapshot();
  });

  it("the bundled fixtures", () => {
    const dir = join(REPO_ROOT, "fixtures", "sessions");
    expect(named(readdirSync(dir).map((n) => join(dir, n)))).toMatchSnapshot();
  });

  const real = sharedData("real-sessions");
  it.skipIf(real === null)("the real sessions, whole, cut at window edges and with lost newlines", () => {
    const dir = tempDir();
    const sources = readdirSync(real!).map((n) => join(real!, n));
    expect(named([...sources, ...sources.flatMap((s) => variantsOf(s, dir))])).toMatchSnapshot();
  });
});
