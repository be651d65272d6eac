import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { exportForeign, foreignLineBytes, type ForeignExportLine } from "../../src/interchange/export-foreign.ts";
import { importForeignFile } from "../../src/interchange/import-foreign.ts";
import { describeBackends } from "../conformance/backends.ts";
import { tempDir } from "../support/temp-dir.ts";

const SID = "3c2b1a00-0000-4000-8000-00000000f00d";
const record = (i: number) => ({
  parentUuid: i === 0 ? null : `u${i - 1}`,
  isSidechain: false,
  cwd: "/home/demo/live",
  sessionId: SID,
  version: "2.1.39",
  type: i % 2 === 0 ? "user" : "assistant",
  message:
    i % 2 === 0
      ? { role: "user", content: `prompt ${i}` }
      : { id: `m${i}`, role: "assistant", content: [{ type: "text", text: `answer ${i}` }] },
  uuid: `u${i}`,
  timestamp: `2026-01-01T00:00:0${i}.000Z`,
});
const line = (i: number) => `${JSON.stringify(record(i))}\n`;

async function records(lines: AsyncGenerator<ForeignExportLine, unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const l of lines) out.push("record" in l ? l.record : l.raw.toString("utf8"));
  return out;
}

describeBackends("a transcript imported while it is being written", (backend) => {
  it("a torn last line is kept; once complete, the next import appends; the export is the source", async () => {
    const options = await backend.options();
    const path = join(tempDir("ts-foreign-live-"), `${SID}.jsonl`);
    const third = line(2);
    writeFileSync(path, line(0) + line(1) + third.slice(0, 25));
    const first = await importForeignFile("claude-code", path, options);
    expect(first.status).toBe("created");
    expect(first.problems.map((p) => p.code)).toEqual(["TORN_LINE"]);
    expect((await importForeignFile("claude-code", path, options)).status).toBe("unchanged");
    expect(await records(exportForeign("claude-code", first.id, options))).toEqual([record(0), record(1), third.slice(0, 25)]);

    // torn again, further on
    appendFileSync(path, third.slice(25, 60));
    expect((await importForeignFile("claude-code", path, options)).status).toBe("appended");
    expect((await importForeignFile("claude-code", path, options)).status).toBe("unchanged");

    appendFileSync(path, third.slice(60) + line(3));
    const done = await importForeignFile("claude-code", path, options);
    expect(done.status).toBe("appended");
    expect(done.counts).toEqual({ records: 4, mapped: 4, kept: 0, damaged: 0 });
    expect((await importForeignFile("claude-code", path, options)).status).toBe("unchanged");
    expect(await records(exportForeign("claude-code", done.id, options))).toEqual([0, 1, 2, 3].map(record));
  });
});

it("a transcript cut at every byte of its last line: every line accounted for, the export is the cut file byte for byte", async () => {
  const dir = tempDir("ts-foreign-cut-");
  const whole = line(0) + line(1);
  const last = line(2);
  for (let cut = 1; cut <= last.length; cut++) {
    const path = join(dir, `${SID}.jsonl`);
    const bytes = whole + last.slice(0, cut);
    writeFileSync(path, bytes);
    const root = tempDir("ts-foreign-cut-root-");
    const report = await importForeignFile("claude-code", path, { root });
    const complete = cut >= last.length - 1; // the record parses once its closing brace is there, \n or not
    expect(report.counts, `cut ${cut}`).toEqual({ records: 3, mapped: complete ? 3 : 2, kept: 0, damaged: complete ? 0 : 1 });
    const out: Buffer[] = [];
    for await (const l of exportForeign("claude-code", report.id, { root })) out.push(foreignLineBytes(l));
    const expected = cut === last.length - 1 ? `${bytes}\n` : bytes; // a complete record gets its \n back
    expect(Buffer.concat(out).toString("utf8"), `cut ${cut}`).toBe(expected);
  }
});
