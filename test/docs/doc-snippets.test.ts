import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child.ts";
import { freshDatabase, pgCluster } from "../support/postgres.ts";

/**
 * Every ```ts / ```js block of README.md and docs/*.md runs as written against the built package:
 * each is written into a scratch project whose node_modules/transcript-store is a symlink to this
 * repo (so `import … from "transcript-store"` is dist/ through the package's exports), type-checked
 * with the project's tsc under `strict`, then run by Node (type stripping) with HOME,
 * TRANSCRIPT_STORE_HOME and PI_CODING_AGENT_DIR in a temp dir.
 *
 * - A block that is a fragment on purpose has `<!-- snippet: skip (reason) -->` as the line before its
 *   fence; the reason is required.
 * - A `"postgres://…"` string literal in a block is replaced by the URL of a fresh database on the
 *   test run's PostgreSQL cluster (without one, such blocks skip with the PostgreSQL suites).
 */
export interface Snippet {
  /** `README.md:42` — the file and the line of the opening fence. */
  where: string;
  lang: "ts" | "js";
  code: string;
  /** The reason given in a `<!-- snippet: skip (reason) -->` mark, or null. */
  skip: string | null;
}

const LANGS: Record<string, "ts" | "js"> = { ts: "ts", typescript: "ts", js: "js", javascript: "js" };
const SKIP_MARK = /^<!--\s*snippet:\s*skip\s*\((.+)\)\s*-->$/;

export function extractSnippets(markdown: string, file: string): Snippet[] {
  const lines = markdown.split("\n");
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[2]!;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence)) end++;
    const lang = LANGS[open[3]!.toLowerCase()];
    if (lang !== undefined) {
      let before = i - 1;
      while (before >= 0 && lines[before]!.trim() === "") before--;
      const mark = before >= 0 ? SKIP_MARK.exec(lines[before]!.trim()) : null;
      snippets.push({
        where: `${file}:${i + 1}`,
        lang,
        code: `${lines.slice(i + 1, end).join("\n")}\n`,
        skip: mark ? mark[1]!.trim() : null,
      });
    }
    i = end;
  }
  return snippets;
}

const DOCS = [
  "README.md",
  ...readdirSync(join(REPO_ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const SNIPPETS = DOCS.flatMap((file) => extractSnippets(readFileSync(join(REPO_ROOT, file), "utf8"), file));
const POSTGRES_URL = /"postgres(?:ql)?:\/\/[^"]*"/g;

let project = "";
const typeErrors = new Map<string, string>();
const fileOf = (s: Snippet) => `${s.where.replace(/[^A-Za-z0-9]+/g, "_")}.${s.lang === "ts" ? "ts" : "mjs"}`;

beforeAll(() => {
  if (!existsSync(join(REPO_ROOT, "dist/index.js"))) throw new Error("dist/ is built by `npm test` (npm run build); build it first");
  project = mkdtempSync(join(tmpdir(), "ts-doc-snippets-"));
  const modules = join(project, "node_modules");
  mkdirSync(join(modules, "@earendil-works"), { recursive: true });
  symlinkSync(REPO_ROOT, join(modules, "transcript-store"), "dir");
  // what a consumer of the package has beside it: @types/node, and pi for the pi snippets (a peer dependency)
  symlinkSync(join(REPO_ROOT, "node_modules/@types"), join(modules, "@types"), "dir");
  for (const name of ["pi-coding-agent", "pi-ai"]) {
    symlinkSync(join(REPO_ROOT, "node_modules/@earendil-works", name), join(modules, "@earendil-works", name), "dir");
  }
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "doc-snippets", private: true, type: "module" }));
  const ts = SNIPPETS.filter((s) => s.lang === "ts" && s.skip === null);
  for (const s of ts) writeFileSync(join(project, fileOf(s)), s.code);
  const compilerOptions = {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    lib: ["ES2023"],
    types: ["node"],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    verbatimModuleSyntax: true,
    moduleDetection: "force",
  };
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ts.map(fileOf) }));
  const tsc = spawnSync(join(REPO_ROOT, "node_modules/.bin/tsc"), ["-p", project], { cwd: project, encoding: "utf8" });
  for (const line of `${tsc.stdout}${tsc.stderr}`.split("\n")) {
    const m = /^([^(]+)\(\d+,\d+\): error/.exec(line);
    if (m) typeErrors.set(m[1]!, `${typeErrors.get(m[1]!) ?? ""}${line}\n`);
  }
  if (tsc.status !== 0 && typeErrors.size === 0) throw new Error(`tsc failed without a per-file error:\n${tsc.stdout}${tsc.stderr}`);
});

afterAll(() => {
  if (project !== "") rmSync(project, { recursive: true, force: true });
});

describe("code snippets in README.md and docs/", () => {
  it("are found, and every skip mark gives its reason", () => {
    expect(SNIPPETS.filter((s) => s.where.startsWith("README.md:")).length).toBeGreaterThan(0);
    for (const s of SNIPPETS) if (s.skip !== null) expect(s.skip.length, s.where).toBeGreaterThan(3);
  });

  it("extracts blocks, their languages and skip marks", () => {
    const md = ["text", "```ts", "a();", "```", "<!-- snippet: skip (a fragment) -->", "", "```js", "b();", "```", "```sh", "c", "```"];
    expect(extractSnippets(md.join("\n"), "x.md")).toEqual([
      { where: "x.md:2", lang: "ts", code: "a();\n", skip: null },
      { where: "x.md:7", lang: "js", code: "b();\n", skip: "a fragment" },
    ]);
  });

  it.for(SNIPPETS)("$where runs as written", async (s, ctx) => {
    if (s.skip !== null) ctx.skip(s.skip);
    const file = join(project, fileOf(s));
    let code = s.code;
    if (POSTGRES_URL.test(code)) {
      if (pgCluster() === null) ctx.skip("PostgreSQL not available");
      const url = await freshDatabase();
      code = code.replace(POSTGRES_URL, JSON.stringify(url));
    }
    expect(typeErrors.get(fileOf(s)) ?? "", `${s.where} under strict tsc`).toBe("");
    writeFileSync(file, code);
    const home = mkdtempSync(join(project, "home-"));
    const work = join(home, "work");
    mkdirSync(work);
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, TRANSCRIPT_STORE_HOME: join(home, ".transcript-store") };
    delete env.PI_CODING_AGENT_DIR;
    delete env.TRANSCRIPT_STORE_URL;
    delete env.TRANSCRIPT_STORE_SESSIONS_DIR;
    const run = spawnSync(process.execPath, ["--experimental-strip-types", "--no-warnings", file], { cwd: work, env, encoding: "utf8" });
    expect(run.status, `${s.where} exited ${run.status} (${run.signal ?? ""}):\n${run.stderr}`).toBe(0);
  });
});
