// Renders the error-code catalogue (src/error-catalogue.ts) into docs/errors.md and the README's
// "Error codes" list (docs/api.md, LIST_FILE). `npm run docs:errors` writes both; test/docs/error-catalogue.test.ts fails
// when either differs from what this renders.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ERROR_CATALOGUE } from "../src/error-catalogue.ts";

/** The file holding the short list between the markers (the README's until issue 33 made it a front door). */
export const LIST_FILE = "docs/api.md";

export const README_BEGIN = "<!-- error-codes:begin (generated from src/error-catalogue.ts: npm run docs:errors) -->";
export const README_END = "<!-- error-codes:end -->";

const thrown = () => ERROR_CATALOGUE.filter((c) => c.kind === "thrown");
const warnings = () => ERROR_CATALOGUE.filter((c) => c.kind === "warning");

/** The whole of docs/errors.md. */
export function renderErrorsDoc(): string {
  const section = (entries: typeof ERROR_CATALOGUE) =>
    entries.map((c) => `### \`${c.code}\`\n\n${c.meaning}\n\n- **Raised when:** ${c.use}\n- **The caller:** ${c.caller}\n`).join("\n");
  return [
    "# Error codes",
    "",
    "<!-- generated from src/error-catalogue.ts by `npm run docs:errors`: edit the catalogue, not this file -->",
    "",
    "Every failure of the library is a `TranscriptStoreError` with a `code` from this closed set (and a",
    "`path` and `cause` where there is one): branch on the `code`, never on the message. Problems that",
    "do not stop an operation reach the `onWarning` option as `{ code, message, path }`; a thrown code",
    "may be a warning too, the warning-only codes are never thrown.",
    "",
    "The CLI reports a thrown code as `transcript-store: <CODE>: <message>` on stderr and exits 1",
    "(2 for a usage error, 130/143 when interrupted); with `--json` the last stdout line is",
    '`{"type":"error","code":"<CODE>","exitCode":1,"message":…}`. That record\'s `code` is `USAGE` for a usage',
    "error, `INTERRUPTED` for an interrupted run and `UNEXPECTED` for a failure that is not a `TranscriptStoreError`",
    "(a defect: please report it).",
    "",
    "Adding a code: put it in `ERROR_CODES` (src/errors.ts) and its entry in src/error-catalogue.ts",
    "(the type-check fails without one), then run `npm run docs:errors`. Prefer an existing code when",
    "its meaning fits exactly; a new case the caller must tell apart gets its own code.",
    "",
    "## Thrown codes",
    "",
    section(thrown()),
    "## Warning-only codes",
    "",
    section(warnings()),
  ]
    .join("\n")
    .replace(/\n+$/, "\n");
}

/** The README's list, markers included. */
export function renderReadmeList(): string {
  const line = (c: (typeof ERROR_CATALOGUE)[number]) => `- \`${c.code}\`: ${c.meaning}`;
  return [
    README_BEGIN,
    ...thrown().map(line),
    "",
    "Warning-only codes (delivered to `onWarning`, never thrown):",
    "",
    ...warnings().map(line),
    README_END,
  ].join("\n");
}

/** `text` with the part between the README markers (included) replaced by `list`. */
export function withReadmeList(text: string, list: string): string {
  const begin = text.indexOf(README_BEGIN);
  const end = text.indexOf(README_END);
  if (begin === -1 || end === -1 || end < begin) throw new Error(`${LIST_FILE} lacks the error-codes markers`);
  return text.slice(0, begin) + list + text.slice(end + README_END.length);
}

if (process.argv[2] === "--write") {
  const root = join(import.meta.dirname, "..");
  writeFileSync(join(root, "docs", "errors.md"), renderErrorsDoc());
  const readme = join(root, LIST_FILE);
  writeFileSync(readme, withReadmeList(readFileSync(readme, "utf8"), renderReadmeList()));
}
