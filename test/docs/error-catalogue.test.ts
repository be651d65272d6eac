import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { LIST_FILE, README_BEGIN, README_END, renderErrorsDoc, renderReadmeList } from "../../scripts/error-docs.ts";
import { ERROR_CATALOGUE, THROWN_CODES, WARNING_ONLY_CODES } from "../../src/error-catalogue.ts";
import { ERROR_CODES } from "../../src/errors.ts";
import { REPO_ROOT } from "../support/child.ts";

const FIX = "regenerate with `npm run docs:errors` after editing src/error-catalogue.ts";

/**
 * Upper-case names in src/ that are not error codes: the kinds of finding `verify` reports
 * (src/maintenance/verify.ts), each checked below to be one.
 */
const VERIFY_FINDING_KINDS = ["MALFORMED_LINE", "GLUED_LINE", "TORN_TAIL", "BROKEN_PARENT", "ORPHANED_ARTIFACTS"];

/**
 * The problem codes of an import report for another agent's transcript (`ForeignLineProblem`,
 * `MappingProblem`, src/interchange/, docs/interchange.md): per-line findings, not error codes.
 */
const FOREIGN_PROBLEM_CODES = ["BAD_JSON", "TORN_LINE", "INVALID_UTF8", "EMPTY_LINE", "UNKNOWN_RECORD_TYPE", "NOT_A_RECORD"];

/** Every code a source text throws or reports: code-shaped string literals, `new TranscriptStoreError(<literal>`, `code: <literal>`. */
function codesIn(text: string): string[] {
  const found = new Set<string>();
  // quoted, not backticked: comments name constants (`DEFAULT_…`) in backticks
  // environment variables (TRANSCRIPT_STORE_*) are names of their own, not codes
  for (const m of text.matchAll(/(["'])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\1/g)) if (!m[2]!.startsWith("TRANSCRIPT_STORE_")) found.add(m[2]!);
  for (const m of text.matchAll(/new TranscriptStoreError\(\s*["'`]([^"'`]*)["'`]/g)) found.add(m[1]!);
  for (const m of text.matchAll(/\bcode:\s*["'`]([A-Z][A-Z0-9_]*)["'`]/g)) {
    if (!/^E[A-Z0-9]+$/.test(m[1]!)) found.add(m[1]!); // errno names (EEXIST, EIO) are Node's
  }
  return [...found];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sourceFiles(join(dir, d.name)) : d.name.endsWith(".ts") ? [join(dir, d.name)] : [],
  );
}

describe("the error-code catalogue", () => {
  it("holds exactly ERROR_CODES as thrown codes, and warning-only codes apart from them", () => {
    expect(Object.keys(THROWN_CODES).sort()).toEqual([...ERROR_CODES].sort());
    for (const code of Object.keys(WARNING_ONLY_CODES)) expect(ERROR_CODES as readonly string[], code).not.toContain(code);
    expect(ERROR_CATALOGUE.map((c) => c.code)).toEqual([...Object.keys(THROWN_CODES), ...Object.keys(WARNING_ONLY_CODES)]);
    for (const c of ERROR_CATALOGUE) for (const field of [c.meaning, c.use, c.caller]) expect(field.trim(), c.code).not.toBe("");
  });

  it("docs/errors.md is the catalogue rendered (no code missing, extra or worded otherwise)", () => {
    expect(readFileSync(join(REPO_ROOT, "docs", "errors.md"), "utf8"), FIX).toBe(renderErrorsDoc());
  });

  it("the short error-code list (docs/api.md) is the catalogue rendered", () => {
    const readme = readFileSync(join(REPO_ROOT, LIST_FILE), "utf8");
    const begin = readme.indexOf(README_BEGIN);
    const end = readme.indexOf(README_END);
    expect(begin, `${LIST_FILE} holds the error-codes markers`).toBeGreaterThan(-1);
    expect(readme.slice(begin, end + README_END.length), FIX).toBe(renderReadmeList());
    for (const c of ERROR_CATALOGUE) expect(docsMention(readme.slice(begin, end), c.code), c.code).toBe(true);
  });

  it("every code thrown or reported in src/ is in the catalogue", () => {
    const known = new Set<string>([...ERROR_CATALOGUE.map((c) => c.code), ...VERIFY_FINDING_KINDS, ...FOREIGN_PROBLEM_CODES]);
    const unknown: string[] = [];
    const seen = new Set<string>();
    for (const file of sourceFiles(join(REPO_ROOT, "src"))) {
      for (const code of codesIn(readFileSync(file, "utf8"))) {
        seen.add(code);
        if (!known.has(code)) unknown.push(`${relative(REPO_ROOT, file)}: ${code}`);
      }
    }
    expect(unknown, "add each to ERROR_CODES and src/error-catalogue.ts").toEqual([]);
    // the scan sees what it is for: the codes changed by issue 23 among them
    for (const code of ["SESSION_EXISTS", "OUTPUT_EXISTS", "MOVE_FAILED", "PERSISTENCE_FAILED", "TORN_TAIL_REPAIRED"]) {
      expect(seen.has(code), code).toBe(true);
    }
    const verify = readFileSync(join(REPO_ROOT, "src", "maintenance", "verify.ts"), "utf8");
    for (const kind of VERIFY_FINDING_KINDS) expect(verify, kind).toMatch(new RegExp(`\\| "${kind}"`));
    const problems = ["foreign-lines.ts", "foreign-entry.ts"]
      .map((f) => readFileSync(join(REPO_ROOT, "src", "interchange", f), "utf8"))
      .join("");
    for (const code of FOREIGN_PROBLEM_CODES) expect(problems, code).toContain(`"${code}"`);
  });

  it("the scan catches a code outside the catalogue in each form a source can hold one", () => {
    expect(codesIn('throw new TranscriptStoreError("OOPS", "x")')).toEqual(["OOPS"]);
    expect(codesIn('warn({ code: "NEW_WARNING", message })')).toEqual(["NEW_WARNING"]);
    expect(codesIn('toStoreError(err, "doing", "MADE_UP")')).toEqual(["MADE_UP"]);
    expect(codesIn('Object.assign(new Error("x"), { code: "EEXIST" })')).toEqual([]);
  });
});

const docsMention = (text: string, code: string) => text.includes(`\`${code}\``);
