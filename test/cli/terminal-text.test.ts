import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { terminalIo, terminalLines, terminalSafe, terminalText } from "../../src/cli/terminal-text.ts";
import type { CliIo } from "../../src/cli/context.ts";
import { REPO_ROOT, runTs } from "../support/child.ts";
import { unsafeCharacters } from "../support/terminal.ts";
import { tempDir } from "../support/temp-dir.ts";

/** Strings rich in what a terminal obeys: C0, DEL, C1, separators, bidi controls, surrogate halves, astral characters. */
const hostileUnit = fc.oneof(
  fc.integer({ min: 0, max: 0xa0 }).map((c) => String.fromCharCode(c)),
  fc.constantFrom("\u2028", "\u2029", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"),
  fc.constantFrom("\u200f", "é", "漢", "\\", '"', "\ufeff"),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
);
const hostileString = fc.array(hostileUnit, { maxLength: 40 }).map((units) => units.join(""));
const hostileJson = fc.dictionary(hostileString, fc.oneof(hostileString, fc.array(hostileString, { maxLength: 4 }), fc.integer()), {
  maxKeys: 5,
});

describe("terminalSafe", () => {
  it("shows each character a terminal obeys as its JSON escape", () => {
    const cases: Array<[string, string]> = [
      ["\x1b]0;title\x07", String.raw`\u001b]0;title\u0007`],
      ["\x1b[2J\x1b[?1049h", String.raw`\u001b[2J\u001b[?1049h`],
      ["\x00\x08\x0b\x0c\x0d\x1f", String.raw`\u0000\b\u000b\f\r\u001f`],
      ["a\nb\tc", String.raw`a\nb\tc`],
      ["\x7f\u0080\u0085\u009b2J\u009d0;x\u009c\u009f", String.raw`\u007f\u0080\u0085\u009b2J\u009d0;x\u009c\u009f`],
      ["\u2028\u2029", String.raw`\u2028\u2029`],
      ["\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069", String.raw`\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069`],
      ["x\ud800y\udc00z", String.raw`x\ud800y\udc00z`],
      ["\udc00\ud800", String.raw`\udc00\ud800`],
    ];
    for (const [raw, shown] of cases) expect(terminalSafe(raw), JSON.stringify(raw)).toBe(shown);
  });

  it("returns printable text as it is (accents, CJK, emoji, RTL marks, backslashes)", () => {
    const printable = 'é 漢字 😀 \u200fשלום\u200e C:\\dir "quoted" \u00a0\ufeff';
    expect(terminalSafe(printable)).toBe(printable);
  });

  it("leaves nothing unsafe, keeps each value on one line and is idempotent", () => {
    fc.assert(
      fc.property(hostileString, (s) => {
        const shown = terminalSafe(s);
        expect(unsafeCharacters(shown)).toEqual([]);
        expect(terminalSafe(shown)).toBe(shown);
        if (unsafeCharacters(s).length === 0) expect(shown).toBe(s);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("terminalLines", () => {
  it("keeps the printer's newlines and tabs and shows every other control", () => {
    expect(terminalLines("a\tb\nc\x1b[2J\r\n")).toBe("a\tb\nc\\u001b[2J\\r\n");
    fc.assert(
      fc.property(hostileString, (s) => {
        const shown = terminalLines(s);
        expect(unsafeCharacters(shown, { layout: true })).toEqual([]);
        expect(shown.split("\n")).toHaveLength(s.split("\n").length);
      }),
      { numRuns: 2000 },
    );
  });

  it("turns a JSON text into a terminal-safe JSON text of exactly the same value", () => {
    fc.assert(
      fc.property(hostileJson, (value) => {
        const exact = JSON.stringify(value);
        const shown = terminalLines(`${exact}\n`);
        expect(unsafeCharacters(shown, { layout: true })).toEqual([]);
        expect(JSON.parse(shown)).toStrictEqual(JSON.parse(exact));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("terminalText and terminalIo", () => {
  it("a template keeps its own layout and puts each value on its line", () => {
    const path = "/tmp/a\nb\x1b]52;c;eA==\x07";
    expect(terminalText`moved ${"id"} to ${path}\n${3}\n`).toBe(`moved id to ${String.raw`/tmp/a\nb\u001b]52;c;eA==\u0007`}\n3\n`);
  });

  it("the writer passes everything written to stdout and stderr through terminalLines", () => {
    const out: string[] = [];
    const err: string[] = [];
    const raw = { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t) } as unknown as CliIo;
    const io = terminalIo(raw);
    io.stdout("a\x1b[2J\n");
    io.stderr("\u009b31m\n");
    expect(out).toEqual(["a\\u001b[2J\n"]);
    expect(err).toEqual(["\\u009b31m\n"]);
  });
});

describe("scripts/check-terminal-output.mjs (run by npm run lint)", () => {
  const RULE = join(REPO_ROOT, "scripts/check-terminal-output.mjs");

  it("passes on src/ and bin/ as they are", async () => {
    const run = await runTs(RULE, []);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
  });

  it("fails on each direct write to the console or the process streams, not on comments", async () => {
    const file = join(tempDir(), "command.ts");
    writeFileSync(
      file,
      [
        "// console.log in a comment is fine",
        'console.log("x");',
        'process.stdout.write("x");',
        "const { stderr } = process . stderr;",
        "/** process.stderr in a doc comment */",
      ].join("\n"),
    );
    const run = await runTs(RULE, [file]);
    expect(run.code).toBe(1);
    expect(run.stderr.match(/command\.ts:\d+/g)).toEqual([`command.ts:2`, `command.ts:3`, `command.ts:4`]);
  });
});
