import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readCodeNegatives, readPositives } from "../../bench/secret-corpus.ts";
import { type RedactionCounts, SecretRedactor } from "../../src/prepare/redact-secrets.ts";
import { BUILTIN_SECRET_RULES } from "../../src/prepare/secret-rules.ts";
import { redactTextPerRule } from "../support/redact-reference.ts";
import { sharedData } from "../support/shared-data.ts";

/**
 * Issue 38 #7: one keyword scan (an automaton) picks the rules and the positions where each is
 * tried; the result must be the per-rule global scan's, marker for marker and count for count.
 */
const redactor = new SecretRedactor(BUILTIN_SECRET_RULES, () => Buffer.alloc(32, 5));

function both(text: string): [[string, string], [string, string]] {
  const a: RedactionCounts = new Map();
  const b: RedactionCounts = new Map();
  const fast = redactor.redactText(text, a);
  const reference = redactTextPerRule(redactor, text, b);
  return [
    [fast, JSON.stringify([...a].sort())],
    [reference, JSON.stringify([...b].sort())],
  ];
}

/** Pieces text is made of: every keyword (in changed case too), the corpus secrets and their contexts, separators. */
const keywords = BUILTIN_SECRET_RULES.flatMap((r) => r.keywords ?? []);
const corpus = [...readPositives().map((p) => p.text), ...readCodeNegatives().map((n) => n.text)];
const pieces = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...keywords, ...keywords.map((k) => k.toUpperCase()), ...keywords.map((k) => k.toLowerCase())) },
  { weight: 3, arbitrary: fc.constantFrom(...corpus) },
  { weight: 2, arbitrary: fc.constantFrom(...corpus).chain((t) => fc.nat(t.length).map((n) => t.slice(n))) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      " ",
      "=",
      ":",
      ": ",
      "\n",
      '"',
      "'",
      ";",
      "/",
      "//",
      "@",
      "?",
      "&",
      "-",
      "_",
      ".",
      "~",
      "://",
      " -u ",
      "Basic ",
    ),
  },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom(..."aZ09+/=_-.~xQ:@") }) },
  { weight: 1, arbitrary: fc.string() },
);

describe("the keyword-scan redactor equals the per-rule global scan", () => {
  it("on generated text (keywords, corpus pieces cut anywhere, separators, noise)", () => {
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 24 }), (parts) => {
        const [fast, reference] = both(parts.join(""));
        expect(fast).toEqual(reference);
      }),
      { numRuns: 3000 },
    );
  });

  it("on every corpus text, alone and all joined", () => {
    for (const text of [...corpus, corpus.join("\n"), corpus.join(" ")]) {
      const [fast, reference] = both(text);
      expect(fast, text.slice(0, 80)).toEqual(reference);
    }
  });

  const real = sharedData("real-sessions");
  it.skipIf(real === null)("on every string of the real transcripts", () => {
    let strings = 0;
    const visit = (v: unknown): void => {
      if (typeof v === "string") {
        strings++;
        const [fast, reference] = both(v);
        expect(fast).toEqual(reference);
      } else if (Array.isArray(v)) v.forEach(visit);
      else if (typeof v === "object" && v !== null) Object.values(v).forEach(visit);
    };
    for (const file of readdirSync(real!).filter((f) => f.endsWith(".jsonl"))) {
      for (const line of readFileSync(join(real!, file), "utf8").split("\n")) {
        if (line.trim() === "") continue;
        try {
          visit(JSON.parse(line));
        } catch (err) {
          if (!(err instanceof SyntaxError)) throw err;
        }
      }
    }
    expect(strings).toBeGreaterThan(1000);
  });
});
