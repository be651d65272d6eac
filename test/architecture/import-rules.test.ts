import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ALLOWED_CYCLES,
  checkImportRules,
  cyclesOf,
  formatViolation,
  importsOf,
  LAYERS,
  RAW_WRITERS,
  stripComments,
  WRITERS,
} from "../../scripts/import-rules.ts";
import { REPO_ROOT } from "../support/child.ts";
import { tempDir } from "../support/temp-dir.ts";

/** A tree of `src/` files (path → source) in a temp dir; returns the violations, one formatted line each. */
function violationsIn(files: Record<string, string>, allowedCycles: string[][] = []): string[] {
  const root = tempDir("ts-rules-");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return checkImportRules(root, { layers: LAYERS, writers: WRITERS, allowedCycles }).map(formatViolation);
}

describe("the import rules", () => {
  it("hold for src/", () => {
    expect(checkImportRules(REPO_ROOT).map(formatViolation)).toEqual([]);
  });

  it("run as the gate's script: exit 1 and one line per violation naming file, line and rule", () => {
    const root = tempDir("ts-rules-");
    mkdirSync(join(root, "src/format"), { recursive: true });
    writeFileSync(join(root, "src/format/reader.ts"), 'export const a = 1;\nimport { readFileSync } from "node:fs";\n');
    const run = spawnSync(process.execPath, [join(REPO_ROOT, "scripts/import-rules.ts"), root], { encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^src\/format\/reader\.ts:2: \[pure\] format \(.*\) may not import node:fs/m);
    expect(run.stderr).toContain("1 import rule violation(s)");
    const clean = spawnSync(process.execPath, [join(REPO_ROOT, "scripts/import-rules.ts"), REPO_ROOT], { encoding: "utf8" });
    expect(clean.stderr).toBe("");
    expect(clean.status).toBe(0);
  });

  it("keep format/ and prepare/ pure: no node:fs, no io, no package", () => {
    expect(
      violationsIn({
        "src/format/a.ts": 'import { constants } from "node:fs";\nimport { createHash } from "node:crypto";\n',
        "src/prepare/b.ts": 'import { io } from "../io.ts";\nimport { toBlobRef } from "../blob/blob-ref.ts";\nimport pg from "pg";\n',
        "src/prepare/c.ts": 'import type { Stats } from "node:fs";\nimport type { Io } from "../io.ts";\n',
        "src/io.ts": "export const io = {};\n",
        "src/blob/blob-ref.ts": "export const toBlobRef = 1;\n",
      }),
    ).toEqual([
      expect.stringMatching(/^src\/format\/a\.ts:1: \[pure\] format .* may not import node:fs/),
      expect.stringMatching(/^src\/prepare\/b\.ts:1: \[layer\] prepare .* may not import io \(src\/io\.ts\)/),
      expect.stringMatching(/^src\/prepare\/b\.ts:3: \[package\] only database may import the package pg/),
      expect.stringMatching(/^src\/prepare\/c\.ts:2: \[layer\] prepare .* may not import io \(src\/io\.ts\) \(type-only included\)/),
    ]);
  });

  it("keep the CLI on top: only its loader (and index.ts's types) import it", () => {
    expect(
      violationsIn({
        "src/cli/main.ts": "export const main = 1;\n",
        "src/cli/context.ts": "export type CliIo = {};\n",
        "src/cli/load-main.ts": 'import type { CliIo } from "./context.ts";\nconst cli = await import("./main.ts");\n',
        "src/index.ts": 'export { main } from "./cli/load-main.ts";\nexport type { CliIo } from "./cli/context.ts";\n',
        "src/session/session-manager.ts": 'import { main } from "../cli/main.ts";\n',
        "src/maintenance/gc.ts": 'import { Bar } from "cli-progress";\n',
      }),
    ).toEqual([
      expect.stringMatching(/^src\/maintenance\/gc\.ts:1: \[package\] only cli may import the package cli-progress/),
      expect.stringMatching(/^src\/session\/session-manager\.ts:1: \[layer\] manager .* may not import cli \(src\/cli\/main\.ts\)/),
    ]);
    expect(
      violationsIn({ "src/cli/main.ts": "export const main = 1;\n", "src/index.ts": 'export { main } from "./cli/main.ts";\n' }),
    ).toEqual([expect.stringMatching(/^src\/index\.ts:1: \[layer\] entry .* may not import cli/)]);
  });

  it("keep the database layer (PostgreSQL's PgStore) below sessions and off the disk", () => {
    // wherever its row puts it (src/storage/postgres/db/, or inside its backend's folder once moved)
    const db = LAYERS.find((l) => l.name === "database")!.paths[0]!;
    const from = (to: string) => posix.relative(db, to);
    const at = (name: string) => `^${(db + name).replace(/[./]/g, "\\$&")}`;
    expect(
      violationsIn({
        [`${db}pg-store.ts`]: [
          `import { a } from "${from("src/accounting/a.ts")}";`,
          `import { s } from "${from("src/session/paths.ts")}";`,
          'import pg from "pg";\n',
        ].join("\n"),
        [`${db}gc.ts`]: 'import { rmSync } from "node:fs";\nimport { createHash } from "node:crypto";\n',
        "src/accounting/a.ts": "export const a = 1;\n",
        "src/session/paths.ts": "export const s = 1;\n",
      }),
    ).toEqual([
      expect.stringMatching(new RegExp(`${at("gc.ts")}:1: \\[layer\\] database .* may not import node:fs`)),
      expect.stringMatching(
        new RegExp(`${at("pg-store.ts")}:2: \\[layer\\] database .* may not import session .*may import: errors, format`),
      ),
    ]);
  });

  it("let only the listed modules take the session file writer's exports", () => {
    const writer = "src/session/session-file.ts";
    expect(WRITERS.map((w) => w.module)).toContain(writer);
    expect(
      violationsIn({
        [writer]: "export class SessionFile {}\nexport function draftPathFor() {}\n",
        "src/storage/file/file-start.ts": 'import { SessionFile } from "../../session/session-file.ts";\n',
        "src/storage/file/file-session.ts": 'import type { SessionFile } from "../../session/session-file.ts";\n',
        "src/maintenance/verify.ts": 'import { draftPathFor } from "../session/session-file.ts";\n',
        "src/maintenance/gc.ts": 'import { draftPathFor, SessionFile as F } from "../session/session-file.ts";\n',
        "src/session/discovery.ts": 'export * from "./session-file.ts";\n',
      }),
    ).toEqual([
      expect.stringMatching(/^src\/maintenance\/gc\.ts:1: \[writer\] imports SessionFile from src\/session\/session-file\.ts/),
      expect.stringMatching(/^src\/session\/discovery\.ts:1: \[writer\] imports SessionFile, SessionFileDraft/),
    ]);
  });

  it("make every module that writes files with the raw primitives say what it writes (RAW_WRITERS)", () => {
    expect(RAW_WRITERS["src/session/session-file.ts"]).toMatch(/session files and their quarantine files/);
    expect(
      violationsIn({
        "src/io.ts": "export function writeFully() {}\nexport const io = {};\n",
        "src/session/session-file.ts": 'import { io } from "../io.ts";\nio.renameSync("a", "b");\n',
        "src/maintenance/rename.ts": 'import { io } from "../io.ts";\n\nexport const f = () => io.renameSync("a", "b");\n',
        "src/maintenance/helper.ts": 'import { writeFully } from "../io.ts";\n',
        "src/storage/direct.ts": 'import { readFileSync, writeFileSync } from "node:fs";\n',
        "src/cli/namespace.ts": 'import * as fs from "node:fs";\nfs.readFileSync("a");\nfs.appendFileSync("a", "b");\n',
        "src/pi/reads.ts": 'import { io } from "../io.ts";\n// io.writeSync(fd, bytes)\nio.readSync(1, Buffer.alloc(1));\n',
        "src/search-index/db.ts": 'import { writeFileSync } from "node:fs";\n',
        "src/io-exclusive.ts": "export function writeNew() {}\n",
        "src/artifacts/publish.ts": 'import { writeNew } from "../io-exclusive.ts";\n',
      }),
    ).toEqual([
      expect.stringMatching(/^src\/artifacts\/publish\.ts:1: \[writer\] writes files \(writeNew\)/),
      expect.stringMatching(/^src\/cli\/namespace\.ts:3: \[writer\] writes files \(fs\.appendFileSync\) but has no row in RAW_WRITERS/),
      expect.stringMatching(/^src\/maintenance\/helper\.ts:1: \[writer\] writes files \(writeFully\)/),
      expect.stringMatching(/^src\/maintenance\/rename\.ts:3: \[writer\] writes files \(io\.renameSync\)/),
      expect.stringMatching(/^src\/search-index\/db\.ts:1: \[layer\] src\/search-index\/ has no row in LAYERS/),
      expect.stringMatching(/^src\/storage\/direct\.ts:1: \[writer\] writes files \(writeFileSync\)/),
    ]);
  });

  it("refuse a runtime import cycle, but not one closed by a type-only or dynamic import", () => {
    expect(
      violationsIn({
        "src/storage/a.ts": 'import { b } from "./b.ts";\nexport const a = 1;\n',
        "src/storage/b.ts": 'import { c } from "./c.ts";\nexport const b = 1;\n',
        "src/storage/c.ts": 'import { a } from "./a.ts";\nexport const c = 1;\n',
        "src/storage/d.ts": 'import type { e } from "./e.ts";\nexport const d = 1;\n',
        "src/storage/e.ts": 'import { d } from "./d.ts";\nexport const e = () => import("./d.ts");\n',
      }),
    ).toEqual([
      "src/storage/a.ts:1: [cycle] runtime import cycle: src/storage/a.ts → src/storage/b.ts → src/storage/c.ts → src/storage/a.ts; " +
        "break it with an `import type`, or move what both need into a lower module",
    ]);
  });

  it("tolerate a cycle listed in ALLOWED_CYCLES only while it exists", () => {
    const pair = ["src/storage/a.ts", "src/storage/b.ts"];
    const cyclic = { "src/storage/a.ts": 'import "./b.ts";\n', "src/storage/b.ts": 'import "./a.ts";\n' };
    expect(violationsIn(cyclic, [pair])).toEqual([]);
    expect(violationsIn({ "src/storage/a.ts": 'import "./b.ts";\n', "src/storage/b.ts": "\n" }, [pair])).toEqual([
      expect.stringMatching(/^src\/storage\/a\.ts:1: \[cycle\] ALLOWED_CYCLES lists .* no longer a cycle/),
    ]);
    for (const cycle of ALLOWED_CYCLES) expect(cycle.length).toBeGreaterThan(1);
  });

  it("refuse a folder without a row: every folder names exactly what it may import", () => {
    expect(
      violationsIn({
        "src/search-index/index-store.ts": 'import { SessionManager } from "../session/session-manager.ts";\n',
        "src/session/session-manager.ts": "export class SessionManager {}\n",
        "src/format/types.ts": 'import { x } from "../search-index/index-store.ts";\n',
      }),
    ).toEqual([
      expect.stringMatching(/^src\/format\/types\.ts:1: \[layer\] format .* may not import src\/search-index\/ \(no row\)/),
      expect.stringMatching(/^src\/search-index\/index-store\.ts:1: \[layer\] src\/search-index\/ has no row in LAYERS/),
      expect.stringMatching(/^src\/search-index\/index-store\.ts:1: \[layer\] src\/search-index\/ \(no row\) .* may not import manager/),
    ]);
  });

  it("refuse two layers importing each other, type-only imports included: the session core never names the seam", () => {
    expect(
      violationsIn({
        "src/storage/session-storage.ts":
          'import type { SessionInfo } from "../session/session-info.ts";\nexport interface StorageBackend {}\n',
        "src/session/session-info.ts":
          'import type { StorageBackend } from "../storage/session-storage.ts";\nexport interface SessionInfo {}\n',
      }),
    ).toEqual([
      expect.stringMatching(/^src\/session\/session-info\.ts:1: \[layer\] session .* may not import seam .*\(type-only included\)/),
    ]);
  });

  it("refuse a row that may import a layer not below it (the table stays free of cycles)", () => {
    const root = tempDir("ts-rules-");
    mkdirSync(join(root, "src/a"), { recursive: true });
    writeFileSync(join(root, "src/a/x.ts"), "export const x = 1;\n");
    const layers = [
      { name: "a", paths: ["src/a/"], owns: "a", mayImport: ["b"] },
      { name: "b", paths: ["src/b/"], owns: "b", mayImport: ["a", "nope"] },
    ];
    expect(checkImportRules(root, { layers, writers: [], allowedCycles: [] }).map(formatViolation)).toEqual([
      "scripts/layers.ts:1: [cycle] a may import b, which is not below it in LAYERS: two layers could import each other",
      "scripts/layers.ts:1: [cycle] b may import nope, which has no row",
    ]);
    for (const [i, layer] of LAYERS.entries())
      for (const name of layer.mayImport) expect(LAYERS.findIndex((l) => l.name === name)).toBeLessThan(i);
  });
});

describe("reading imports", () => {
  it("finds static, re-exported, side-effect and dynamic imports, and tells type-only ones apart", () => {
    const source = [
      'import { a, type B, c as d } from "./a.ts";',
      'import type { E } from "./e.ts";',
      "import {",
      "  f,",
      "  g,",
      '} from "../f.ts";',
      'export * from "./h.ts";',
      'export type { I } from "./i.ts";',
      'import "./side.ts";',
      '// import { x } from "./commented.ts";',
      '/* import { y } from "./block.ts"; */',
      'const url = "postgres://host/db"; import { z } from "./after-string.ts";',
      'type W = import("./w.ts").W;',
      'const m = await import("./m.ts");',
      'const re = /"/; import { r } from "./after-regex.ts";',
    ].join("\n");
    const found = importsOf("src/x/y.ts", source).map((i) => [i.line, i.target, i.kind, i.typeOnly, i.names]);
    expect(found).toEqual([
      [1, "src/x/a.ts", "static", false, ["a", "c"]],
      [2, "src/x/e.ts", "static", true, []],
      [3, "src/f.ts", "static", false, ["f", "g"]],
      [7, "src/x/h.ts", "static", false, "*"],
      [8, "src/x/i.ts", "static", true, []],
      [9, "src/x/side.ts", "static", false, []],
      [12, "src/x/after-string.ts", "static", false, ["z"]],
      [13, "src/x/w.ts", "dynamic", true, []],
      [14, "src/x/m.ts", "dynamic", false, "*"],
      [15, "src/x/after-regex.ts", "static", false, ["r"]],
    ]);
  });

  it("blanks comments but keeps strings and line breaks", () => {
    expect(stripComments('a // b\n"c // d" /* e\n f */ g')).toBe('a \n"c // d"     \n      g');
  });

  it("finds every cycle of a graph, self-imports included", () => {
    const files = ["a", "b", "c", "d", "s"];
    const edges: Array<[string, string]> = [
      ["a", "b"],
      ["b", "a"],
      ["b", "c"],
      ["c", "d"],
      ["s", "s"],
    ];
    expect(cyclesOf(files, edges)).toEqual([["a", "b"], ["s"]]);
  });
});
