import { writeFileSync } from "node:fs";
import { afterAll, expect, it } from "vitest";
import { SessionManager } from "../../src/index.ts";
import { closeUrlStores } from "../../src/storage/store-url.ts";
import { describeValue, type HostileCase, hostileCases, type Slot, type ValueClass } from "../support/hostile-values.ts";
import { describeBackends } from "./backends.ts";
import { type Outcome, runCase } from "./hostile-run.ts";

/**
 * Issue 20, acceptance 3: hostile values through both backends. Every value either round-trips
 * (stored line, eager and lazy reopen, export: what docs/format.md promises) or is refused with a
 * coded error before anything is acknowledged, the session going on. The default run is a fixed
 * seed and a few hundred cases per backend; FUZZ_RUNS / FUZZ_SEED widen it, FUZZ_REPORT=<file>
 * writes the figures as JSON.
 *
 * Each backend meets the rule its own way in one place: a cwd holding NUL is refused by the file
 * tree (no path holds one) and stored exactly by PostgreSQL (a row holds it; its listing column maps
 * it, see src/storage/postgres/db/column-text.ts).
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20_2011);
const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const figures: Record<string, unknown> = {};

afterAll(async () => {
  await closeUrlStores();
  if (process.env.FUZZ_REPORT) writeFileSync(process.env.FUZZ_REPORT, `${JSON.stringify(figures, null, 2)}\n`);
});

/**
 * The minimal hostile values issue 20 names, one per slot, each its own test (a failure names it),
 * with what must become of it: "round-trip", or "refused:<code>" (before anything is acknowledged).
 */
/** Seeded, so the case is the same every run; base64 of random bytes does not compress. */
const INCOMPRESSIBLE = Buffer.from(Array.from({ length: 2400 }, (_, i) => (i * 7919 + ((i * i) % 251)) % 256)).toString("base64");
const U2028_IMAGE = { type: "image", data: `\u2028${"A".repeat(1100)}\u2028`, mimeType: "image/png" };
/**
 * The wanted outcome, or one by capability where both answers meet the rule: a NUL cwd is refused
 * where sessions are files (no path holds one) and stored exactly elsewhere (a row holds it).
 */
type Wanted = string | Record<"sessionFiles" | "otherwise", string>;

const NAMED: Array<[string, Slot, ValueClass, unknown, Wanted]> = [
  ["NUL in a user message (the first: its listing preview)", "user-message", "unicode", "a\u0000b", "round-trip"],
  ["a lone high surrogate in a user message", "user-message", "unicode", "a\ud800b", "round-trip"],
  ["a lone low surrogate in a user message", "user-message", "unicode", "a\udc00b", "round-trip"],
  [
    "C1 controls, OSC 52 and bidi marks in a user message",
    "user-message",
    "unicode",
    "\u009b31m\u202eevil\u200f\u001b]52;c;eA==\u0007",
    "round-trip",
  ],
  ["NUL in assistant text", "assistant-text", "unicode", "\u0000", "round-trip"],
  ["NUL in a custom type", "custom-type", "unicode", "t\u0000", "round-trip"],
  ["NUL in an entry type", "entry-type", "unicode", "t\u0000", "round-trip"],
  ["a lone surrogate in an entry type", "entry-type", "unicode", "t\udfff", "round-trip"],
  ["an empty entry type", "entry-type", "unicode", "", "refused:INVALID_OPTION"],
  ["NUL in a label", "label", "unicode", "l\u0000", "round-trip"],
  ["NUL in a session name", "session-name", "unicode", "n\u0000", "round-trip"],
  [
    "NUL in a cwd (no path holds one)",
    "cwd",
    "unicode",
    "a\u0000b",
    { sessionFiles: "refused:PERSISTENCE_FAILED", otherwise: "round-trip" },
  ],
  ["a lone surrogate in a cwd", "cwd", "unicode", "a\ud800b", "round-trip"],
  ["a 3,000-character incompressible cwd (past a btree key)", "cwd", "huge", INCOMPRESSIBLE, "round-trip"],
  [
    "a move to a cwd holding NUL",
    "move-cwd",
    "unicode",
    "m\u0000",
    { sessionFiles: "refused:PERSISTENCE_FAILED", otherwise: "round-trip" },
  ],
  ["a move to a cwd holding a lone surrogate and bidi marks", "move-cwd", "unicode", "m\udc00\u202e", "round-trip"],
  ["NUL and U+FFFF in an artifact", "artifact", "unicode", "x\u0000y\uffff", "round-trip"],
  ["a lone surrogate in an artifact (UTF-8 cannot hold it)", "artifact", "unicode", "x\ud800y", "refused:INVALID_OPTION"],
  ["a lone surrogate in an agent output", "agent-output", "unicode", "# \udc00", "refused:INVALID_OPTION"],
  ["NUL in an artifact summary and tool type", "artifact-meta", "unicode", "s\u0000", "round-trip"],
  ["agent-output ids up to the API's bound (199 + `-2`)", "agent-output-id", "unicode", "x".repeat(24), "round-trip"],
  ["__proto__, empty and NUL keys", "custom-data", "keys", JSON.parse('{"__proto__":{"a":1},"":2,"\\u0000":3}'), "round-trip"],
  ["-0, 1e308 and integers past 2^53", "custom-data", "numbers", [-0, 1e308, 2 ** 64, 2 ** 53 + 2], "round-trip"],
  ["U+2028 around canonical base64 in an image (kept inline, whole)", "user-message", "image", [U2028_IMAGE], "round-trip"],
  [
    "a string one unit past the cut, a pair at the cut",
    "user-message",
    "huge",
    `${"a".repeat(951)}\ud83d\ude00${"b".repeat(48)}`,
    "round-trip",
  ],
];

const said = (o: Outcome) => (o.kind === "failed" ? `failed: ${o.detail}` : o.kind === "refused" ? `refused:${o.code}` : o.kind);

describeBackends("hostile values", (backend) => {
  it.each(NAMED)("%s", async (_title, slot, valueClass, value, wanted) => {
    const options = await backend.options();
    const c: HostileCase = { index: 0, slot, valueClass, value, maxStringChars: 1000 };
    expect(said(await runCase(c, backend, options))).toBe(
      typeof wanted === "string" ? wanted : wanted[backend.supports.sessionFiles ? "sessionFiles" : "otherwise"],
    );
  });

  it("cwds that differ only in a lone surrogate list apart", async () => {
    const options = await backend.options();
    const made: Record<string, string> = {};
    for (const cwd of ["/w/a\ud800", "/w/a\udc00", "/w/a\ufffd"]) {
      const m = await SessionManager.create(cwd, options);
      m.appendMessage({ role: "user", content: cwd, timestamp: 1 });
      await m.close();
      made[cwd] = m.sessionId;
    }
    for (const [cwd, id] of Object.entries(made)) {
      expect((await SessionManager.list(cwd, options)).map((s) => [s.id, s.cwd])).toEqual([[id, cwd]]);
    }
  });

  it(`seeded fuzz: ${RUNS} cases (seed ${SEED})`, { timeout: 600_000 + RUNS * 2_000 }, async () => {
    const options = await backend.options();
    const tally: Record<string, { cases: number; roundTrip: number; refused: Record<string, number>; failed: number; ms: number }> = {};
    const failures: string[] = [];
    for (const c of hostileCases(SEED, RUNS)) {
      const started = performance.now();
      const outcome: Outcome = await runCase(c, backend, options);
      tally[c.valueClass] ??= { cases: 0, roundTrip: 0, refused: {}, failed: 0, ms: 0 };
      const row = tally[c.valueClass]!;
      row.ms += Math.round(performance.now() - started); // reported only, never asserted
      row.cases++;
      if (outcome.kind === "round-trip") row.roundTrip++;
      else if (outcome.kind === "refused") row.refused[outcome.code] = (row.refused[outcome.code] ?? 0) + 1;
      else {
        row.failed++;
        failures.push(`#${c.index} ${c.valueClass} in ${c.slot} ${describeValue(c.value)}: ${outcome.detail}`);
      }
    }
    figures[backend.name] = { seed: SEED, runs: RUNS, tally, failures };
    console.log(`hostile values [${backend.name}] seed ${SEED}, ${RUNS} cases:\n${JSON.stringify(tally)}\n${failures.join("\n")}`);
    expect(failures).toEqual([]);
  });
});
